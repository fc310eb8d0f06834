#include "ncmp_json.h"

#include <ctype.h>
#include <string.h>

#include "ncmp_utf8.h"

/* Length of a JSON number at s (RFC 8259: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?),
 * or 0 when what starts there is not one. */
static size_t json_number_len(const char *s, size_t len)
{
    size_t i = 0;

    if (i < len && s[i] == '-')
        i++;
    if (i < len && s[i] == '0') {
        i++;
    } else if (i < len && s[i] >= '1' && s[i] <= '9') {
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
    } else {
        return 0;
    }
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !isdigit((unsigned char)s[i]))
            return 0;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= len || !isdigit((unsigned char)s[i]))
            return 0;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < len && (isalnum((unsigned char)s[i]) || s[i] == '.'))
        return 0; /* 01, 1.2.3, 1x */
    return i;
}

/* json-c's strict mode still takes single quotes, NaN, Infinity, "1." and
 * raw control characters in strings; RFC 8259 does not, nor does jsonb
 * (which also refuses \u0000). Returns the offset of the first offence. */
static long lexical_invalid_at(const char *s, size_t len, const char **why)
{
    int in_str = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (in_str) {
            if (c == '"') {
                in_str = 0;
            } else if (c < 0x20) {
                *why = "control character in a string";
                return (long)i;
            } else if (c == '\\') {
                if (i + 5 < len && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0) {
                    *why = "\\u0000 in a string";
                    return (long)i;
                }
                i++;
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '-' || isdigit(c)) {
            size_t n = json_number_len(s + i, len - i);
            if (!n) {
                *why = "malformed number";
                return (long)i;
            }
            i += n - 1;
        } else if (isalpha(c)) {
            size_t n = 0;
            while (i + n < len && isalnum((unsigned char)s[i + n]))
                n++;
            if (!((n == 4 && memcmp(s + i, "true", 4) == 0) ||
                  (n == 5 && memcmp(s + i, "false", 5) == 0) ||
                  (n == 4 && memcmp(s + i, "null", 4) == 0))) {
                *why = "unexpected word (only true, false and null are JSON)";
                return (long)i;
            }
            i += n - 1;
        } else if (c == '\'' || c == '.' || c == '+') {
            *why = "unexpected character";
            return (long)i;
        }
    }
    return -1;
}

int ncmp_json_parse(const char *buf, size_t len, json_object **out, ncmp_err *err)
{
    json_tokener *tok;
    json_object *obj;
    enum json_tokener_error jerr;
    size_t end;
    size_t utf8_bad;
    long bad;
    const char *why = NULL;

    if (len > (size_t)0x7fffffff)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "JSON document too large (%zu bytes)", len);
    if (len == 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "empty document, JSON expected");
    utf8_bad = ncmp_utf8_invalid_at(buf, len);
    if (utf8_bad < len)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "invalid JSON at byte %zu: invalid UTF-8",
                            utf8_bad);
    tok = json_tokener_new_ex(64);
    if (!tok)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    obj = json_tokener_parse_ex(tok, buf, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue && !obj) {
        /* A bare number or word ends only at the end of input: say so. */
        obj = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
        end = len;
        if (jerr == json_tokener_continue) {
            json_tokener_free(tok);
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "invalid JSON: document ends early at byte %zu", len);
        }
    }
    json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        if (obj)
            json_object_put(obj);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "invalid JSON at byte %zu: %s", end,
                            json_tokener_error_desc(jerr));
    }
    if (end > len)
        end = len;
    for (size_t i = end; i < len; i++) {
        if (!isspace((unsigned char)buf[i])) {
            json_object_put(obj);
            return ncmp_err_set(err, NCMP_ERR_REJECT, "invalid JSON: unexpected data at byte %zu",
                                i);
        }
    }
    bad = lexical_invalid_at(buf, end, &why);
    if (bad >= 0) {
        json_object_put(obj);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "invalid JSON at byte %ld: %s", bad, why);
    }
    *out = obj; /* NULL for a document that is just `null` (json-c's JSON null) */
    return 0;
}

static int typed_field(json_object *obj, const char *key, json_type type, const char *tname,
                       json_object **out, ncmp_err *err)
{
    json_object *v = NULL;

    *out = NULL;
    if (!obj || !json_object_is_type(obj, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "expected a JSON object around '%s'", key);
    if (!json_object_object_get_ex(obj, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, type))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "field '%s' must be %s, not %s", key, tname,
                            json_type_to_name(json_object_get_type(v)));
    *out = v;
    return 0;
}

int ncmp_json_string_field(json_object *obj, const char *key, const char **out, ncmp_err *err)
{
    json_object *v;

    *out = NULL;
    if (typed_field(obj, key, json_type_string, "a string", &v, err) != 0)
        return -1;
    if (v)
        *out = json_object_get_string(v);
    return 0;
}

int ncmp_json_array_field(json_object *obj, const char *key, json_object **out, ncmp_err *err)
{
    return typed_field(obj, key, json_type_array, "an array", out, err);
}

int ncmp_json_object_field(json_object *obj, const char *key, json_object **out, ncmp_err *err)
{
    return typed_field(obj, key, json_type_object, "an object", out, err);
}
