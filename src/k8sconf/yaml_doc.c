/* yaml_doc.c - a YAML document through libyaml's loader, read with line
 * numbers for every error. */
#include "k8sconf/k8s_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "migsched/number.h"

ms_status_t ms__ydoc_load_stream(ms__ydoc_t *y, FILE *f, const char *name, ms_diag_t *diag)
{
    yaml_parser_t p;
    ms_status_t st = MS_OK;

    memset(y, 0, sizeof(*y));
    y->path = name;
    y->diag = diag;
    if (!yaml_parser_initialize(&p))
        return MS_ENOMEM;
    yaml_parser_set_input_file(&p, f);
    if (!yaml_parser_load(&p, &y->doc)) {
        ms_diag_set(diag, name, (long)p.problem_mark.line + 1, "", "YAML: %s%s%s",
                    p.problem != NULL ? p.problem : "malformed",
                    p.context != NULL ? " " : "", p.context != NULL ? p.context : "");
        st = p.error == YAML_MEMORY_ERROR ? MS_ENOMEM : MS_EPARSE;
    } else {
        y->loaded = true;
        if (yaml_document_get_root_node(&y->doc) == NULL) {
            ms_diag_set(diag, name, 1, "", "empty document");
            st = MS_EPARSE;
        }
    }
    yaml_parser_delete(&p);
    if (st != MS_OK)
        ms__ydoc_free(y);
    return st;
}

ms_status_t ms__ydoc_load(ms__ydoc_t *y, const char *path, ms_diag_t *diag)
{
    FILE *f;
    ms_status_t st;

    if ((f = fopen(path, "rb")) == NULL) {
        memset(y, 0, sizeof(*y));
        ms_diag_set(diag, path, 0, "", "cannot open: %s", strerror(errno));
        return MS_EIO;
    }
    st = ms__ydoc_load_stream(y, f, path, diag);
    fclose(f);
    return st;
}

void ms__ydoc_free(ms__ydoc_t *y)
{
    if (y->loaded)
        yaml_document_delete(&y->doc);
    y->loaded = false;
}

yaml_node_t *ms__ydoc_root(ms__ydoc_t *y)
{
    return yaml_document_get_root_node(&y->doc);
}

long ms__ynode_line(const yaml_node_t *n)
{
    return n != NULL ? (long)n->start_mark.line + 1 : 0;
}

bool ms__yerr(ms__ydoc_t *y, const yaml_node_t *n, const char *field, const char *fmt, ...)
{
    char msg[sizeof(((ms_diag_t *)0)->msg)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ms_diag_set(y->diag, y->path, ms__ynode_line(n), field, "%s", msg);
    return false;
}

const char *ms__yscalar(ms__ydoc_t *y, const yaml_node_t *n, const char *field)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE) {
        ms__yerr(y, n, field, "expected a scalar");
        return NULL;
    }
    /* libyaml keeps the length; a NUL inside would cut the text short */
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        ms__yerr(y, n, field, "NUL byte in value");
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

bool ms__ymap(ms__ydoc_t *y, const yaml_node_t *n, const char *field)
{
    return n != NULL && n->type == YAML_MAPPING_NODE ? true
                                                     : ms__yerr(y, n, field, "expected a mapping");
}

bool ms__yseq(ms__ydoc_t *y, const yaml_node_t *n, const char *field)
{
    return n != NULL && n->type == YAML_SEQUENCE_NODE ? true
                                                      : ms__yerr(y, n, field, "expected a list");
}

int ms__ymap_len(const yaml_node_t *n)
{
    return (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

const char *ms__ymap_key(ms__ydoc_t *y, const yaml_node_t *n, int i, const yaml_node_t **val,
                         const char *field)
{
    const yaml_node_pair_t *pr = n->data.mapping.pairs.start + i;
    yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
    *val = yaml_document_get_node(&y->doc, pr->value);
    if (*val == NULL) {
        ms__yerr(y, n, field, "missing value");
        return NULL;
    }
    return ms__yscalar(y, k, field);
}

int ms__yseq_len(const yaml_node_t *n)
{
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *ms__yseq_item(ms__ydoc_t *y, const yaml_node_t *n, int i)
{
    return yaml_document_get_node(&y->doc, n->data.sequence.items.start[i]);
}

bool ms__yint(ms__ydoc_t *y, const yaml_node_t *n, const char *field, long lo, long hi, long *out)
{
    const char *s = ms__yscalar(y, n, field);
    int64_t v;

    if (s == NULL)
        return false;
    if (ms_number_int(s, lo, hi, &v) != MS_OK)
        return ms__yerr(y, n, field, "'%s' is not an integer in [%ld, %ld]", s, lo, hi);
    *out = (long)v;
    return true;
}

bool ms__ybool(ms__ydoc_t *y, const yaml_node_t *n, const char *field, bool *out)
{
    const char *s = ms__yscalar(y, n, field);

    if (s == NULL)
        return false;
    if (strcmp(s, "true") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0)
        *out = false;
    else
        return ms__yerr(y, n, field, "'%s' is not true or false", s);
    return true;
}

bool ms__k8s_name_ok(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n >= MS__K8S_NAME)
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];
        bool an = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!an && !((c == '-' || c == '.' || c == '_') && i > 0 && i < n - 1))
            return false;
    }
    return true;
}

void ms__kfield(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}
