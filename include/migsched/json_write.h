/* json_write.h - the one writer of a JSON string into a stdio stream.
 *
 * The simulator's metrics, the layout advisor, fgd-experiment and
 * nvml-probe write their JSON with fprintf; their strings go through here,
 * so that a name with a quote, a backslash or a control byte is quoted the
 * same way in every file. (The service writes its JSON into buffers,
 * byte for byte as jansson does: src/service/jtext.h.)
 */
#ifndef MIGSCHED_JSON_WRITE_H
#define MIGSCHED_JSON_WRITE_H

#include <stdio.h>

/* s as a quoted JSON string: '"' and '\' escaped with a backslash, bytes
 * below 0x20 as \u00xx, every other byte as it is (UTF-8 passes through).
 * NULL writes "". Errors show in ferror(f). */
void ms_json_write_str(FILE *f, const char *s);

#endif
