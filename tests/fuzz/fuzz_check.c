#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_sql.h"

/* Pieces of the grammar, so that mutations reach past the tokenizer. */
static const char *const cpspath_tokens[] = {
    "/",
    "//",
    "[",
    "]",
    "@",
    "'",
    "\"",
    "''",
    "=",
    "!=",
    "<",
    ">=",
    " and ",
    " or ",
    "(",
    ")",
    ",",
    "::",
    "text()",
    "contains(",
    "ancestor::",
    "-",
    "1",
    "-2.5",
    "cm-handles",
    "state",
    "@id",
    "public-properties",
    "@name",
    "@value",
    "lock-reason",
    "additional-properties",
    "dmi-registry",
    "\xc3\xa9",
    "\xff",
    "operational",
    "sync-state",
    "/@id",
    /* the CPS store's paths over any model */
    "bookstore",
    "categories[@code='1']",
    "book",
    "@title",
    "@price",
    "label[text()=",
    "/ancestor::",
    "bs:",
    ":",
    "/@",
    "openroadm-device",
    "[@device-id='D1']",
};

const fuzz_dict fuzz_cpspath_dict = {cpspath_tokens,
                                     sizeof(cpspath_tokens) / sizeof(cpspath_tokens[0])};

void fuzz_check_placeholders(const char *path, const char *sql, int first, size_t n, int extra)
{
    unsigned char used[64 * 8] = {0};
    size_t seen = 0;
    int extra_used = 0;

    if (n > sizeof(used))
        fuzz_fail("more parameters than the conditions allow", path, sql);
    for (const char *p = strchr(sql, '$'); p; p = strchr(p + 1, '$')) {
        long k;
        if (p[1] < '0' || p[1] > '9')
            continue; /* the end anchor of a pattern */
        k = strtol(p + 1, NULL, 10);
        if (extra > 0 && k == extra) {
            extra_used = 1;
            continue;
        }
        k -= first;
        if (k < 0 || (size_t)k >= n)
            fuzz_fail("placeholder out of range", path, sql);
        if (!used[k]++)
            seen++;
    }
    if (seen != n)
        fuzz_fail("a parameter is not used in the SQL", path, sql);
    if (extra > 0 && !extra_used)
        fuzz_fail("the caller's parameter is not used in the SQL", path, sql);
}

void fuzz_check_shape(const char *path, const char *sql)
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

void fuzz_check_refusal(const char *path, const ncmp_err *err, const ncmp_buf *sql, size_t sql_len,
                        const ncmp_cpspath_params *params, size_t nparams)
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
