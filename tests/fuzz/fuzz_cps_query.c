#include "fuzz_cps_query.h"

#include <stdlib.h>
#include <string.h>

int fuzz_cps_query_check(const uint8_t *data, size_t size, int anchors_param, int first_param,
                         ncmp_buf *sql, ncmp_cpspath_params *params, cps_query_kind *kind)
{
    char *path = malloc(size + 1);
    size_t sql_len = sql->len, nparams = params->n;
    ncmp_err err = {0};
    char *leaf = NULL;
    int ok;

    if (!path)
        abort();
    memcpy(path, data, size);
    path[size] = '\0';
    ok = cps_query_to_sql(path, anchors_param, first_param, sql, params, kind, &leaf, &err) == 0;
    if (ok) {
        const char *out = sql->data + sql_len;

        if (strncmp(out, "SELECT ", 7) != 0 || strchr(out, ';'))
            fuzz_fail("not one SELECT", path, out);
        fuzz_check_placeholders(path, out, first_param, params->n - nparams, anchors_param);
        fuzz_check_shape(path, out);
        if ((*kind == CPS_QUERY_LEAF) != (leaf != NULL))
            fuzz_fail("the kind and the leaf name disagree", path, out);
        if (leaf && !strstr(path, leaf))
            fuzz_fail("a leaf name that is not in the path", path, leaf);
    } else {
        fuzz_check_refusal(path, &err, sql, sql_len, params, nparams);
    }
    free(leaf);
    free(path);
    return ok;
}
