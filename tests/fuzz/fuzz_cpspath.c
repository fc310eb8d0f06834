#include "fuzz_cpspath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_fail(const char *what, const char *path, const char *detail)
{
    fprintf(stderr, "fuzz_cpspath: %s\n  path: %s\n  %s\n", what, path, detail);
    abort();
}

/* Every $k in the SQL is in [first, first+n) and each of them is used. */
static void fuzz_check_placeholders(const char *path, const char *sql, int first, size_t n)
{
    unsigned char used[64 * 8] = {0};
    size_t seen = 0;

    if (n > sizeof(used))
        fuzz_fail("more parameters than the conditions allow", path, sql);
    for (const char *p = strchr(sql, '$'); p; p = strchr(p + 1, '$')) {
        long k;
        if (p[1] < '0' || p[1] > '9')
            continue; /* the end anchor of the number pattern */
        k = strtol(p + 1, NULL, 10) - first;
        if (k < 0 || (size_t)k >= n)
            fuzz_fail("placeholder out of range", path, sql);
        if (!used[k]++)
            seen++;
    }
    if (seen != n)
        fuzz_fail("a parameter is not used in the SQL", path, sql);
}

/* Brackets balance outside quotes, and quotes close. */
static void fuzz_check_shape(const char *path, const char *sql)
{
    long depth = 0;
    char quote = 0;

    for (const char *p = sql; *p; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == '(' && ++depth > 0) {
            continue;
        } else if (*p == ')' && --depth < 0) {
            fuzz_fail("unbalanced ')'", path, sql);
        }
    }
    if (quote || depth != 0)
        fuzz_fail("unclosed quote or bracket", path, sql);
}

static void fuzz_check_refusal(const char *path, const ncmp_err *err, const ncmp_buf *sql,
                               size_t sql_len, const ncmp_cpspath_params *params, size_t nparams)
{
    static const char prefix[] = "Invalid CPS path at position ";
    unsigned long pos;

    if (err->cls != NCMP_ERR_REJECT)
        fuzz_fail("a refusal that is not REJECT", path, err->msg);
    if (strncmp(err->msg, prefix, sizeof(prefix) - 1) != 0)
        fuzz_fail("a refusal without its position", path, err->msg);
    pos = strtoul(err->msg + sizeof(prefix) - 1, NULL, 10);
    if (pos < 1 || pos > strlen(path) + 1)
        fuzz_fail("a position outside the path", path, err->msg);
    if (sql->len != sql_len || params->n != nparams)
        fuzz_fail("output written on failure", path, err->msg);
}

int fuzz_cpspath_check(const uint8_t *data, size_t size, int first_param, ncmp_buf *sql,
                       ncmp_cpspath_params *params)
{
    char *path = malloc(size + 1);
    size_t sql_len = sql->len, nparams = params->n;
    ncmp_err err = {0};
    int ok;

    if (!path)
        abort();
    memcpy(path, data, size);
    path[size] = '\0';
    ok = ncmp_cpspath_to_sql(path, first_param, sql, params, &err) == 0;
    if (ok) {
        if (sql->len == sql_len)
            fuzz_fail("accepted without SQL", path, "");
        fuzz_check_placeholders(path, sql->data + sql_len, first_param, params->n - nparams);
        fuzz_check_shape(path, sql->data + sql_len);
    } else {
        fuzz_check_refusal(path, &err, sql, sql_len, params, nparams);
    }
    free(path);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};

    /* vary where the numbering starts, from the input itself */
    fuzz_cpspath_check(data, size, 1 + (int)(size % 5), &sql, &params);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
    return 0;
}
