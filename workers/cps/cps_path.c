#include "cps_path.h"

#include <stdlib.h>
#include <string.h>

/* One key of a predicate while it is parsed: name and decoded value. */
typedef struct key {
    const char *name;
    size_t name_len;
    ncmp_buf value;
    ncmp_buf text; /* @name='value' as stored, for sorting */
} key;

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static size_t skip_blanks(const char *s, size_t i)
{
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    return i;
}

static int bad(ncmp_err *err, const char *xpath, size_t at, const char *what)
{
    ncmp_err_set(err, NCMP_ERR_REJECT, "Invalid xpath '%.200s' at position %zu: %s", xpath, at + 1,
                 what);
    return -1;
}

/* A name (the prefix, when there is one, dropped) at s[*i]. */
static int parse_name(const char *s, size_t *i, const char **name, size_t *len)
{
    size_t start = *i, j = *i;

    if (!is_name_start(s[j]))
        return -1;
    while (is_name_char(s[j]))
        j++;
    if (s[j] == ':') {
        start = ++j;
        if (!is_name_start(s[j]))
            return -1;
        while (is_name_char(s[j]))
            j++;
    }
    *name = s + start;
    *len = j - start;
    *i = j;
    return 0;
}

/* A value: '..' (with '' for '), ".." (with "" for "), or bare up to a
 * blank or ']'. */
static int parse_value(const char *s, size_t *i, ncmp_buf *out)
{
    size_t j = *i;
    char q = s[j];

    if (q == '\'' || q == '"') {
        for (j++;; j++) {
            if (!s[j])
                return -1;
            if (s[j] == q) {
                if (s[j + 1] != q)
                    break;
                j++;
            }
            ncmp_buf_append_char(out, s[j]);
        }
        *i = j + 1;
        return 0;
    }
    while (s[j] && s[j] != ']' && s[j] != ' ' && s[j] != '\t')
        ncmp_buf_append_char(out, s[j++]);
    if (j == *i)
        return -1;
    *i = j;
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    const key *x = a, *y = b;
    size_t n = x->text.len < y->text.len ? x->text.len : y->text.len;
    int c = memcmp(x->text.data, y->text.data, n);

    return c ? c : (x->text.len > y->text.len) - (x->text.len < y->text.len);
}

static void keys_free(key *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ncmp_buf_free(&k[i].value);
        ncmp_buf_free(&k[i].text);
    }
}

/* [@k='v' and ...] at s[*i] (s[*i] == '['), appended sorted to out. */
static int parse_predicate(const char *xpath, size_t *i, ncmp_buf *out, ncmp_err *err)
{
    key keys[CPS_PATH_MAX_KEY];
    size_t n = 0, j = *i + 1;
    int rc = -1;

    memset(keys, 0, sizeof(keys));
    for (;;) {
        key *k;
        j = skip_blanks(xpath, j);
        if (n == CPS_PATH_MAX_KEY) {
            bad(err, xpath, j, "too many keys");
            goto cleanup;
        }
        k = &keys[n];
        if (xpath[j] != '@') {
            bad(err, xpath, j, "expected '@'");
            goto cleanup;
        }
        j++;
        if (parse_name(xpath, &j, &k->name, &k->name_len) != 0) {
            bad(err, xpath, j, "expected a key name");
            goto cleanup;
        }
        n++;
        j = skip_blanks(xpath, j);
        if (xpath[j] != '=') {
            bad(err, xpath, j, "expected '='");
            goto cleanup;
        }
        j = skip_blanks(xpath, j + 1);
        if (parse_value(xpath, &j, &k->value) != 0) {
            bad(err, xpath, j, "expected a value");
            goto cleanup;
        }
        if (k->value.len && memchr(k->value.data, CPS_PATH_SEP, k->value.len)) {
            bad(err, xpath, j, "a key value may not hold U+0001");
            goto cleanup;
        }
        j = skip_blanks(xpath, j);
        if (xpath[j] == ']')
            break;
        if (strncmp(xpath + j, "and", 3) != 0 || (xpath[j + 3] != ' ' && xpath[j + 3] != '@')) {
            bad(err, xpath, j, "expected ']' or 'and'");
            goto cleanup;
        }
        j += 3;
    }
    for (size_t x = 0; x < n; x++) {
        key *k = &keys[x];
        ncmp_buf_append_char(&k->text, '@');
        ncmp_buf_append(&k->text, k->name, k->name_len);
        ncmp_buf_append_str(&k->text, "='");
        for (size_t c = 0; c < k->value.len; c++) {
            if (k->value.data[c] == '\'')
                ncmp_buf_append_char(&k->text, '\'');
            ncmp_buf_append_char(&k->text, k->value.data[c]);
        }
        ncmp_buf_append_char(&k->text, '\'');
    }
    qsort(keys, n, sizeof(keys[0]), key_cmp);
    ncmp_buf_append_char(out, '[');
    for (size_t x = 0; x < n; x++) {
        if (x)
            ncmp_buf_append_str(out, " and ");
        ncmp_buf_append(out, keys[x].text.data, keys[x].text.len);
    }
    ncmp_buf_append_char(out, ']');
    *i = j + 1;
    rc = 0;
cleanup:
    keys_free(keys, n);
    return rc;
}

int cps_path_encode(const char *xpath, ncmp_buf *out, ncmp_err *err)
{
    ncmp_buf path = NCMP_BUF_INIT;
    size_t i = 0;

    if (strlen(xpath) > CPS_PATH_MAX)
        return bad(err, xpath, CPS_PATH_MAX, "longer than 8192 bytes");
    if (!xpath[0] || strcmp(xpath, "/") == 0)
        return 0;
    while (xpath[i]) {
        const char *name;
        size_t len;
        if (xpath[i] != '/') {
            ncmp_buf_free(&path);
            return bad(err, xpath, i, "expected '/'");
        }
        i++;
        if (parse_name(xpath, &i, &name, &len) != 0) {
            ncmp_buf_free(&path);
            return bad(err, xpath, i, "expected a node name");
        }
        ncmp_buf_append_char(&path, CPS_PATH_SEP);
        ncmp_buf_append(&path, name, len);
        if (xpath[i] == '[' && parse_predicate(xpath, &i, &path, err) != 0) {
            ncmp_buf_free(&path);
            return -1;
        }
    }
    ncmp_buf_append(out, path.data, path.len);
    ncmp_buf_free(&path);
    return 0;
}

/* The end of the step starting at path[i] (a separator or the end);
 * separators inside quoted values are not step ends (values never hold
 * U+0001, but skipping quotes keeps this exact). */
static size_t step_end(const char *path, size_t len, size_t i)
{
    int quoted = 0;

    for (; i < len; i++) {
        if (path[i] == '\'')
            quoted = !quoted; /* a doubled '' toggles twice */
        else if (!quoted && path[i] == CPS_PATH_SEP)
            break;
    }
    return i;
}

void cps_path_decode(const char *path, size_t len, ncmp_buf *out)
{
    if (len == 0) {
        ncmp_buf_append_char(out, '/');
        return;
    }
    for (size_t i = 0; i < len; i++)
        ncmp_buf_append_char(out, path[i] == CPS_PATH_SEP ? '/' : path[i]);
}

int cps_path_to_libyang(const char *path, const char *module, ncmp_buf *out, ncmp_err *err)
{
    size_t len = strlen(path), i = 0;
    int first = 1;

    while (i < len) {
        size_t end = step_end(path, len, i + 1), j = i + 1;
        ncmp_buf_append_char(out, '/');
        if (first && module) {
            ncmp_buf_append_str(out, module);
            ncmp_buf_append_char(out, ':');
        }
        first = 0;
        while (j < end && path[j] != '[')
            ncmp_buf_append_char(out, path[j++]);
        /* [@k='v' and @k2='w'] -> [k='v'][k2='w'] */
        while (j < end && path[j] != ']') {
            ncmp_buf value = NCMP_BUF_INIT;
            char q;
            j++; /* '[' or the blank before "and" */
            if (path[j] == 'a')
                j += 4; /* "and " */
            j++;        /* '@' */
            ncmp_buf_append_char(out, '[');
            while (path[j] != '=')
                ncmp_buf_append_char(out, path[j++]);
            ncmp_buf_append_char(out, '=');
            j += 2; /* =' */
            for (;; j++) {
                if (path[j] == '\'') {
                    if (path[j + 1] != '\'')
                        break;
                    j++;
                }
                ncmp_buf_append_char(&value, path[j]);
            }
            j++; /* closing ' */
            q = value.len && memchr(value.data, '\'', value.len) ? '"' : '\'';
            if (q == '"' && memchr(value.data, '"', value.len)) {
                ncmp_buf_free(&value);
                ncmp_err_set(err, NCMP_ERR_REJECT,
                             "a key value holds both ' and \": it cannot be validated");
                return -1;
            }
            ncmp_buf_append_char(out, q);
            ncmp_buf_append(out, value.data, value.len);
            ncmp_buf_append_char(out, q);
            ncmp_buf_append_char(out, ']');
            ncmp_buf_free(&value);
        }
        i = end;
    }
    return 0;
}

void cps_path_first_name(const char *path, const char **name, size_t *len)
{
    size_t n = 0;

    if (!path[0]) {
        *name = path;
        *len = 0;
        return;
    }
    while (path[1 + n] && path[1 + n] != '[' && path[1 + n] != CPS_PATH_SEP)
        n++;
    *name = path + 1;
    *len = n;
}

size_t cps_path_parent_len(const char *path, size_t len)
{
    /* key values never hold the separator (encoding and writes refuse
     * it), so the last one ends the parent: the read path's hot spot */
    const char *sep = len ? memrchr(path, CPS_PATH_SEP, len) : NULL;

    return sep ? (size_t)(sep - path) : 0;
}

void cps_path_last_name(const char *path, size_t len, const char **name, size_t *nlen)
{
    size_t start = len ? cps_path_parent_len(path, len) + 1 : 0, n = 0;

    while (start + n < len && path[start + n] != '[')
        n++;
    *name = path + start;
    *nlen = n;
}

int cps_path_depth(const char *path, size_t len)
{
    int d = 0;

    for (const char *p = path; (p = memchr(p, CPS_PATH_SEP, len - (size_t)(p - path))); p++)
        d++;
    return d;
}

int cps_path_is_list_entry(const char *path, size_t len)
{
    return len > 0 && path[len - 1] == ']';
}

void cps_path_ranges_of(const char *path, size_t len, cps_path_ranges *r)
{
    memset(r, 0, sizeof(*r));
    if (len == 0) {
        ncmp_buf_append_char(&r->lo1, CPS_PATH_SEP);
        ncmp_buf_append_char(&r->hi1, CPS_PATH_SEP + 1);
    } else {
        ncmp_buf_append(&r->lo1, path, len);
        ncmp_buf_append(&r->hi1, path, len);
        ncmp_buf_append_char(&r->hi1, CPS_PATH_SEP + 1);
    }
    if (len && !cps_path_is_list_entry(path, len)) {
        ncmp_buf_append(&r->lo2, path, len);
        ncmp_buf_append_char(&r->lo2, '['); /* the entries: [@... */
        ncmp_buf_append(&r->hi2, path, len);
        ncmp_buf_append_char(&r->hi2, '[' + 1);
    } else {
        ncmp_buf_append(&r->lo2, r->hi1.data, r->hi1.len);
        ncmp_buf_append(&r->hi2, r->hi1.data, r->hi1.len);
    }
}

void cps_path_ranges_free(cps_path_ranges *r)
{
    ncmp_buf_free(&r->lo1);
    ncmp_buf_free(&r->hi1);
    ncmp_buf_free(&r->lo2);
    ncmp_buf_free(&r->hi2);
}
