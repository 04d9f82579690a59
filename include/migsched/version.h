/* version.h - which libmigsched this is.
 *
 * The version is the one in the repository's VERSION file (the shared
 * library's soname and the pkg-config file use it too); ms_version() is the
 * library's own, MS_VERSION_MAJOR the headers' (compare them to catch a
 * program built against other headers than the library it loads). */
#ifndef MIGSCHED_VERSION_H
#define MIGSCHED_VERSION_H

#define MS_VERSION_MAJOR 0

/* "0.1.0"; static storage. */
const char *ms_version(void);

#endif
