/* version.c - ms_version(): the VERSION file's text, passed by the build
 * (Makefile: -DMS_VERSION_STRING for this file only). */
#include "migsched/version.h"

#ifndef MS_VERSION_STRING
#define MS_VERSION_STRING "0.0.0-unknown"
#endif

const char *ms_version(void)
{
    return MS_VERSION_STRING;
}
