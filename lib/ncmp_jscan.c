#include "ncmp_jscan.h"

#include <ctype.h>
#include <string.h>

#include "ncmp_utf8.h"

static const char *const kind_names[] = {"string",  "integer", "number", "null",
                                         "boolean", "object",  "array"};

const char *ncmp_jkind_name(ncmp_jkind kind)
{
    return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

void ncmp_jscan_init(ncmp_jscan *sc, const char *s, size_t len, ncmp_err *err)
{
    sc->s = s ? s : "";
    sc->len = s ? len : 0;
    sc->i = 0;
    sc->depth = 0;
    sc->err = err;
}

int ncmp_jscan_malformed(ncmp_jscan *sc, const char *why)
{
    return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "malformed JSON at byte %zu: %s", sc->i, why);
}

static void skip_ws(ncmp_jscan *sc)
{
    while (sc->i < sc->len && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
                               sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
        sc->i++;
}

char ncmp_jscan_peek(ncmp_jscan *sc)
{
    skip_ws(sc);
    return sc->i < sc->len ? sc->s[sc->i] : '\0';
}

int ncmp_jscan_expect(ncmp_jscan *sc, char c, const char *why)
{
    if (ncmp_jscan_peek(sc) != c)
        return ncmp_jscan_malformed(sc, why);
    sc->i++;
    return 0;
}

int ncmp_jscan_end(ncmp_jscan *sc)
{
    if (ncmp_jscan_peek(sc) != '\0' || sc->i < sc->len)
        return ncmp_jscan_malformed(sc, "more after the JSON value");
    return 0;
}

static int hex4(const char *p)
{
    for (int k = 0; k < 4; k++)
        if (!isxdigit((unsigned char)p[k]))
            return 0;
    return 1;
}

/* A string at sc->i (its opening quote). */
static int scan_string(ncmp_jscan *sc, ncmp_jtok *tok)
{
    const unsigned char *s = (const unsigned char *)sc->s;
    size_t start = sc->i++, i = sc->i, len = sc->len;

    while (i < len) {
        unsigned char c = s[i];
        size_t n;

        /* the common case first: plain ASCII */
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        sc->i = i;
        if (c == '"') {
            sc->i = i + 1;
            tok->p = sc->s + start;
            tok->n = sc->i - start;
            return 0;
        }
        if (c < 0x20)
            return ncmp_jscan_malformed(sc, "control character in a string");
        if (c == '\\') {
            char e = i + 1 < len ? sc->s[i + 1] : '\0';
            if (!e || !strchr("\"\\/bfnrtu", e))
                return ncmp_jscan_malformed(sc, "bad escape in a string");
            if (e == 'u' && (len - i < 6 || !hex4(sc->s + i + 2)))
                return ncmp_jscan_malformed(sc, "bad \\u escape in a string");
            if (e == 'u' && memcmp(sc->s + i + 2, "0000", 4) == 0)
                return ncmp_jscan_malformed(sc, "\\u0000 in a string");
            i += e == 'u' ? 6 : 2;
        } else if ((n = ncmp_utf8_char_len(sc->s + i, len - i)) == 0) {
            return ncmp_jscan_malformed(sc, "invalid UTF-8 in a string");
        } else {
            i += n;
        }
    }
    sc->i = i;
    return ncmp_jscan_malformed(sc, "unterminated string");
}

static void digits(ncmp_jscan *sc)
{
    while (sc->i < sc->len && isdigit((unsigned char)sc->s[sc->i]))
        sc->i++;
}

/* A number at sc->i (RFC 8259); NCMP_J_INTEGER when it has no fraction or
 * exponent. */
static int scan_number(ncmp_jscan *sc, ncmp_jkind *kind)
{
    *kind = NCMP_J_INTEGER;
    if (sc->s[sc->i] == '-')
        sc->i++;
    if (sc->i < sc->len && sc->s[sc->i] == '0')
        sc->i++;
    else if (sc->i < sc->len && sc->s[sc->i] >= '1' && sc->s[sc->i] <= '9')
        digits(sc);
    else
        return ncmp_jscan_malformed(sc, "malformed number");
    if (sc->i < sc->len && sc->s[sc->i] == '.') {
        *kind = NCMP_J_NUMBER;
        if (++sc->i >= sc->len || !isdigit((unsigned char)sc->s[sc->i]))
            return ncmp_jscan_malformed(sc, "malformed number");
        digits(sc);
    }
    if (sc->i < sc->len && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        *kind = NCMP_J_NUMBER;
        if (++sc->i < sc->len && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
            sc->i++;
        if (sc->i >= sc->len || !isdigit((unsigned char)sc->s[sc->i]))
            return ncmp_jscan_malformed(sc, "malformed number");
        digits(sc);
    }
    if (sc->i < sc->len && (isalnum((unsigned char)sc->s[sc->i]) || sc->s[sc->i] == '.'))
        return ncmp_jscan_malformed(sc, "malformed number");
    return 0;
}

static int literal(ncmp_jscan *sc, const char *word, ncmp_jkind k, ncmp_jkind *kind)
{
    size_t n = strlen(word);

    if (sc->len - sc->i < n || memcmp(sc->s + sc->i, word, n) != 0 ||
        (sc->i + n < sc->len && isalnum((unsigned char)sc->s[sc->i + n])))
        return ncmp_jscan_malformed(sc, "unexpected word (only true, false and null are JSON)");
    sc->i += n;
    *kind = k;
    return 0;
}

int ncmp_jscan_members(ncmp_jscan *sc, ncmp_jscan_member_fn member, void *ctx)
{
    ncmp_jtok name;
    int rc;

    if (ncmp_jscan_expect(sc, '{', "expected an object") != 0)
        return -1;
    if (ncmp_jscan_peek(sc) == '}') {
        sc->i++;
        return 0;
    }
    for (;;) {
        if (ncmp_jscan_peek(sc) != '"')
            return ncmp_jscan_malformed(sc, "expected a member name");
        if (scan_string(sc, &name) != 0 ||
            ncmp_jscan_expect(sc, ':', "expected ':' after a member name") != 0)
            return -1;
        if ((rc = member(sc, &name, ctx)) != 0)
            return rc;
        if (ncmp_jscan_peek(sc) == '}')
            break;
        if (ncmp_jscan_expect(sc, ',', "expected ',' or '}'") != 0)
            return -1;
    }
    sc->i++;
    return 0;
}

int ncmp_jscan_items(ncmp_jscan *sc, ncmp_jscan_item_fn item, void *ctx)
{
    int rc;

    if (ncmp_jscan_expect(sc, '[', "expected an array") != 0)
        return -1;
    if (ncmp_jscan_peek(sc) == ']') {
        sc->i++;
        return 0;
    }
    for (;;) {
        if ((rc = item(sc, ctx)) != 0)
            return rc;
        if (ncmp_jscan_peek(sc) == ']')
            break;
        if (ncmp_jscan_expect(sc, ',', "expected ',' or ']'") != 0)
            return -1;
    }
    sc->i++;
    return 0;
}

static int any_item(ncmp_jscan *sc, void *ctx)
{
    ncmp_jkind kind;
    ncmp_jtok tok;

    (void)ctx;
    return ncmp_jscan_value(sc, &kind, &tok);
}

static int any_member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    (void)name;
    return any_item(sc, ctx);
}

int ncmp_jscan_value(ncmp_jscan *sc, ncmp_jkind *kind, ncmp_jtok *tok)
{
    char c = ncmp_jscan_peek(sc);
    size_t start = sc->i;
    int rc;

    switch (c) {
    case '"':
        *kind = NCMP_J_STRING;
        return scan_string(sc, tok);
    case '{':
    case '[':
        *kind = c == '{' ? NCMP_J_OBJECT : NCMP_J_ARRAY;
        if (++sc->depth > NCMP_JSCAN_MAX_DEPTH)
            return ncmp_jscan_malformed(sc, "nested more than 64 deep");
        rc = c == '{' ? ncmp_jscan_members(sc, any_member, NULL)
                      : ncmp_jscan_items(sc, any_item, NULL);
        if (rc != 0)
            return rc;
        sc->depth--;
        break;
    case 't':
        rc = literal(sc, "true", NCMP_J_BOOL, kind);
        break;
    case 'f':
        rc = literal(sc, "false", NCMP_J_BOOL, kind);
        break;
    case 'n':
        rc = literal(sc, "null", NCMP_J_NULL, kind);
        break;
    case '\0':
        return ncmp_jscan_malformed(sc,
                                    sc->i < sc->len ? "unexpected character" : "unexpected end");
    default:
        if (c != '-' && !isdigit((unsigned char)c))
            return ncmp_jscan_malformed(sc, "unexpected character");
        rc = scan_number(sc, kind);
        break;
    }
    if (rc != 0)
        return rc;
    tok->p = sc->s + start;
    tok->n = sc->i - start;
    return 0;
}

int ncmp_jtok_named(const ncmp_jtok *tok, const char *name)
{
    size_t n = strlen(name);

    return tok->n == n + 2 && tok->p[0] == '"' && memcmp(tok->p + 1, name, n) == 0;
}

int ncmp_jtok_escaped(const ncmp_jtok *tok)
{
    return memchr(tok->p, '\\', tok->n) != NULL;
}
