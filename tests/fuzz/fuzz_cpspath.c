#include "fuzz_cpspath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fuzz_cpspath_check(const uint8_t *data, size_t size, int first_param, ncmp_buf *sql,
                       ncmp_cpspath_params *params)
{
    char *path = malloc(size + 1);
    size_t sql_len = sql->len, nparams = params->n;
    ncmp_cpspath_comparison one;
    ncmp_err err = {0};
    int ok;

    if (!path)
        abort();
    memcpy(path, data, size);
    path[size] = '\0';
    ok = ncmp_cpspath_to_sql(path, first_param, sql, params, &one, &err) == 0;
    if (ok) {
        if (sql->len == sql_len)
            fuzz_fail("accepted without SQL", path, "");
        fuzz_check_placeholders(path, sql->data + sql_len, first_param, params->n - nparams, 0);
        fuzz_check_shape(path, sql->data + sql_len);
        if (one.column) {
            /* the REST searches trust this report instead of the SQL */
            char whole[128];
            snprintf(whole, sizeof(whole), "h.%s %s $%d", one.column, one.negate ? "<>" : "=",
                     first_param);
            if (strcmp(sql->data + sql_len, whole) != 0 || params->n - nparams != 1)
                fuzz_fail("reported as one comparison, but it is not", path, sql->data + sql_len);
        }
    } else {
        fuzz_check_refusal(path, &err, sql, sql_len, params, nparams);
    }
    free(path);
    return ok;
}
