/* fdio.h - private: whole-buffer writes and reads on a file descriptor,
 * retrying short and interrupted calls. The one such loop for the daemon's
 * inventory files, the agent's CDI files and the CLI's benchmark children
 * (which hand their results back through a pipe). */
#ifndef MIGSCHED_FDIO_H
#define MIGSCHED_FDIO_H

#include <stddef.h>

/* All n bytes to fd: 0, or -1 when a write fails or writes nothing. */
int ms__write_all(int fd, const void *p, size_t n);
/* Up to n bytes from fd, stopping early only at end of file: the count
 * read, or -1 when a read fails. */
long ms__read_full(int fd, void *p, size_t n);

#endif
