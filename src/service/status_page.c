/* status_page.c - the status page served at / (filled in below). */
#include "service/svc.h"

const char svc_status_html[] =
    "<!doctype html><html><head><meta charset=utf-8><title>migschedd</title></head>"
    "<body><p>migschedd: see <a href=/v1/cluster>/v1/cluster</a></p></body></html>\n";
