/* Unit tests of lib/ncmp_metrics.c: the registry, the text exposition
 * format (checked by a strict parser written here, not by the code under
 * test), escaping, concurrency, collectors, and that docs/operations.md
 * documents every metric the library registers.
 *
 * Criterion runs each test in its own process, so each starts with an
 * empty registry. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_metrics.h"
#include "unit_leak.h"

TestSuite(ncmp_metrics, .fini = unit_leak_check);

/* --- a strict parser of the text format 0.0.4 ---------------------------- */

/* A violation longjmps back to doc_try_parse with the reason in
 * parse_error; everything allocated so far hangs off the doc, so
 * doc_free releases it either way. */

#define MAX_LABELS 16

typedef struct prom_label {
    char *name;
    char *value; /* unescaped */
} prom_label;

typedef struct prom_sample {
    char *name;
    char *family;
    prom_label labels[MAX_LABELS];
    size_t nlabels;
    double value;
} prom_sample;

typedef struct prom_family {
    char *name;
    char *type;
    char *help; /* unescaped */
} prom_family;

typedef struct prom_doc {
    prom_sample *samples;
    size_t nsamples;
    prom_family *families;
    size_t nfamilies;
} prom_doc;

static jmp_buf parse_jmp;
static char parse_error[1024];

static void fail_line(int lineno, const char *line, const char *why)
{
    snprintf(parse_error, sizeof(parse_error), "line %d: %s: %s", lineno, why, line);
    longjmp(parse_jmp, 1);
}

static void fail(const char *fmt, const char *a)
{
    snprintf(parse_error, sizeof(parse_error), "%s: %s", fmt, a);
    longjmp(parse_jmp, 1);
}

static int metric_name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int label_name_ok(const char *s, size_t n)
{
    if (n == 0 || memchr(s, ':', n))
        return 0;
    return metric_name_ok(s, n);
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Unescape s[0..n) into *out (quote: label value rules, else HELP rules);
 * -1 on a bad escape. *out is set either way. */
static int unescape(const char *s, size_t n, int quote, char **out)
{
    char *o = malloc(n + 1);
    size_t k = 0;

    *out = o;
    o[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (quote && s[i] == '"')
            return -1;
        if (s[i] != '\\') {
            o[k++] = s[i];
            continue;
        }
        if (++i == n)
            return -1;
        if (s[i] == '\\')
            o[k++] = '\\';
        else if (s[i] == 'n')
            o[k++] = '\n';
        else if (quote && s[i] == '"')
            o[k++] = '"';
        else
            return -1;
    }
    o[k] = '\0';
    return 0;
}

static int parse_value(const char *s, size_t n, double *v)
{
    char buf[64];
    char *end;

    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (strcmp(buf, "+Inf") == 0) {
        *v = INFINITY;
        return 1;
    }
    if (strcmp(buf, "-Inf") == 0) {
        *v = -INFINITY;
        return 1;
    }
    if (strcmp(buf, "NaN") == 0) {
        *v = NAN;
        return 1;
    }
    /* strtod takes "inf", "nan", hex and leading blanks: the format not */
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eE", buf[i]))
            return 0;
    *v = strtod(buf, &end);
    return *end == '\0';
}

static prom_family *family_get(const prom_doc *d, const char *name)
{
    for (size_t i = 0; i < d->nfamilies; i++)
        if (strcmp(d->families[i].name, name) == 0)
            return &d->families[i];
    return NULL;
}

/* The family a sample name belongs to, given the current family. */
static const char *sample_family(const prom_family *cur, const char *name)
{
    size_t fl;

    if (!cur || !cur->type)
        return NULL;
    if (strcmp(name, cur->name) == 0 && strcmp(cur->type, "histogram") != 0)
        return cur->name;
    fl = strlen(cur->name);
    if (strcmp(cur->type, "histogram") == 0 && strncmp(name, cur->name, fl) == 0 &&
        (strcmp(name + fl, "_bucket") == 0 || strcmp(name + fl, "_sum") == 0 ||
         strcmp(name + fl, "_count") == 0))
        return cur->name;
    return NULL;
}

/* The families array may move when it grows: keep an index, not a pointer. */
static void parse_comment(prom_doc *d, long *cur, const char *line, int lineno)
{
    const char *p, *sp;
    prom_family *f;
    long idx = -1;

    if (strncmp(line, "# HELP ", 7) != 0 && strncmp(line, "# TYPE ", 7) != 0)
        return; /* a plain comment */
    p = line + 7;
    sp = strchr(p, ' ');
    if (!sp || !metric_name_ok(p, (size_t)(sp - p)))
        fail_line(lineno, line, "bad metric name in HELP/TYPE");
    for (size_t i = 0; i < d->nfamilies; i++)
        if (strlen(d->families[i].name) == (size_t)(sp - p) &&
            strncmp(d->families[i].name, p, (size_t)(sp - p)) == 0)
            idx = (long)i;
    if (idx >= 0 && idx != *cur)
        fail_line(lineno, line, "family appears twice (not contiguous)");
    if (idx < 0) {
        d->families = realloc(d->families, (d->nfamilies + 1) * sizeof(*d->families));
        idx = (long)d->nfamilies++;
        memset(&d->families[idx], 0, sizeof(d->families[idx]));
        d->families[idx].name = dupn(p, (size_t)(sp - p));
    }
    *cur = idx;
    f = &d->families[idx];
    if (line[2] == 'H') {
        if (f->help)
            fail_line(lineno, line, "second HELP");
        if (unescape(sp + 1, strlen(sp + 1), 0, &f->help) != 0)
            fail_line(lineno, line, "bad escape in HELP");
    } else {
        static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
        int ok = 0;
        if (f->type)
            fail_line(lineno, line, "second TYPE");
        for (size_t i = 0; i < 5; i++)
            ok |= strcmp(sp + 1, types[i]) == 0;
        if (!ok)
            fail_line(lineno, line, "unknown type");
        f->type = strdup(sp + 1);
    }
}

static void parse_labels(prom_sample *s, const char **pp, const char *line, int lineno)
{
    const char *p = *pp + 1; /* past '{' */

    while (*p != '}') {
        const char *eq = strchr(p, '=');
        const char *q;
        prom_label *l;
        if (!eq || !label_name_ok(p, (size_t)(eq - p)) || eq[1] != '"')
            fail_line(lineno, line, "bad label");
        if (s->nlabels == MAX_LABELS)
            fail_line(lineno, line, "too many labels");
        l = &s->labels[s->nlabels++];
        l->name = dupn(p, (size_t)(eq - p));
        for (size_t i = 0; i + 1 < s->nlabels; i++)
            if (strcmp(s->labels[i].name, l->name) == 0)
                fail_line(lineno, line, "label twice in one sample");
        q = eq + 2;
        while (*q && *q != '"')
            q += (*q == '\\' && q[1]) ? 2 : 1;
        if (*q != '"')
            fail_line(lineno, line, "unterminated label value");
        if (unescape(eq + 2, (size_t)(q - eq - 2), 1, &l->value) != 0)
            fail_line(lineno, line, "bad escape in label value");
        p = q + 1;
        if (*p == ',')
            p++;
        else if (*p != '}')
            fail_line(lineno, line, "expected , or }");
    }
    *pp = p + 1;
}

static void parse_sample(prom_doc *d, long cur, const char *line, int lineno)
{
    const char *p = line;
    const char *end;
    prom_sample *s;

    d->samples = realloc(d->samples, (d->nsamples + 1) * sizeof(*d->samples));
    s = &d->samples[d->nsamples++];
    memset(s, 0, sizeof(*s));
    while (*p && *p != '{' && *p != ' ')
        p++;
    if (!metric_name_ok(line, (size_t)(p - line)))
        fail_line(lineno, line, "bad sample name");
    s->name = dupn(line, (size_t)(p - line));
    if (cur < 0 || !sample_family(&d->families[cur], s->name))
        fail_line(lineno, line, "sample outside its family (no TYPE before it)");
    s->family = strdup(sample_family(&d->families[cur], s->name));
    if (*p == '{')
        parse_labels(s, &p, line, lineno);
    if (*p != ' ')
        fail_line(lineno, line, "expected one space before the value");
    p++;
    end = strchr(p, ' ');
    if (!end)
        end = p + strlen(p);
    if (!parse_value(p, (size_t)(end - p), &s->value))
        fail_line(lineno, line, "bad value");
    if (*end) { /* a timestamp: an integer */
        for (const char *t = end + 1; *t; t++)
            if (!(*t >= '0' && *t <= '9') && !(t == end + 1 && *t == '-'))
                fail_line(lineno, line, "bad timestamp");
    }
}

static const char *label_of(const prom_sample *s, const char *name)
{
    for (size_t i = 0; i < s->nlabels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}

/* "name{a="x",b="y",}" with labels sorted, le left out when asked. */
static void series_key(const prom_sample *s, int without_le, char *out, size_t len)
{
    const prom_label *sorted[MAX_LABELS];
    size_t n = 0, o;

    for (size_t i = 0; i < s->nlabels; i++)
        if (!without_le || strcmp(s->labels[i].name, "le") != 0)
            sorted[n++] = &s->labels[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(sorted[j - 1]->name, sorted[j]->name) > 0; j--) {
            const prom_label *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    o = (size_t)snprintf(out, len, "%s{", without_le ? s->family : s->name);
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s=\"%s\",", sorted[i]->name, sorted[i]->value);
    if (o < len)
        snprintf(out + o, len - o, "}");
}

static void check_no_duplicates(const prom_doc *d)
{
    char a[2048], b[2048];

    for (size_t i = 0; i < d->nsamples; i++) {
        series_key(&d->samples[i], 0, a, sizeof(a));
        for (size_t j = i + 1; j < d->nsamples; j++) {
            series_key(&d->samples[j], 0, b, sizeof(b));
            if (strcmp(a, b) == 0)
                fail("duplicate series", a);
        }
    }
}

/* One histogram series (the samples of family `fam` whose labels but le
 * make `key`): buckets with increasing le, cumulative counts, the last le
 * +Inf, _count equal to it, _sum present. */
static void check_histogram_series(const prom_doc *d, const char *fam, const char *key)
{
    char other[2048];
    double prev_le = -INFINITY, prev_count = 0, inf_count = -1, count = -1;
    int has_sum = 0;

    for (size_t j = 0; j < d->nsamples; j++) {
        const prom_sample *t = &d->samples[j];
        const char *suffix;
        double le;
        if (strcmp(t->family, fam) != 0)
            continue;
        series_key(t, 1, other, sizeof(other));
        if (strcmp(key, other) != 0)
            continue;
        suffix = t->name + strlen(t->family);
        if (strcmp(suffix, "_bucket") != 0) {
            if (label_of(t, "le"))
                fail("le on a sample that is no bucket", key);
            if (strcmp(suffix, "_sum") == 0)
                has_sum = 1;
            else
                count = t->value;
            continue;
        }
        if (!label_of(t, "le") || !parse_value(label_of(t, "le"), strlen(label_of(t, "le")), &le))
            fail("bucket without a valid le", key);
        if (le <= prev_le)
            fail("le not increasing", key);
        if (t->value < prev_count)
            fail("buckets not cumulative", key);
        if (inf_count >= 0)
            fail("bucket after +Inf", key);
        prev_le = le;
        prev_count = t->value;
        if (isinf(le))
            inf_count = t->value;
    }
    if (inf_count < 0)
        fail("no +Inf bucket", key);
    if (!has_sum || count < 0)
        fail("_sum or _count missing", key);
    if (count != inf_count)
        fail("_count differs from the +Inf bucket", key);
}

static void check_samples(const prom_doc *d)
{
    char key[2048];

    for (size_t i = 0; i < d->nsamples; i++) {
        const prom_sample *s = &d->samples[i];
        const prom_family *f = family_get(d, s->family);
        if (strcmp(f->type, "counter") == 0 && !(s->value >= 0))
            fail("counter not >= 0", s->name);
        if (strcmp(f->type, "histogram") == 0) {
            series_key(s, 1, key, sizeof(key));
            check_histogram_series(d, s->family, key);
        }
    }
}

/* Parse `text`; 0, or -1 with the reason in parse_error. */
static int doc_try_parse(prom_doc *d, const char *text)
{
    static char *copy;
    static volatile long cur;
    static volatile int lineno;
    char *p;

    memset(d, 0, sizeof(*d));
    free(copy);
    copy = NULL;
    cur = -1;
    lineno = 0;
    if (setjmp(parse_jmp)) {
        free(copy);
        copy = NULL;
        return -1;
    }
    if (!text || !*text)
        fail("empty exposition", "");
    copy = strdup(text);
    p = copy;
    while (*p) {
        char *nl = strchr(p, '\n');
        long c = cur;
        if (!nl)
            fail("last line without a newline", p);
        *nl = '\0';
        lineno++;
        if (!*p)
            fail_line(lineno, p, "empty line");
        if (p[0] == '#')
            parse_comment(d, &c, p, lineno);
        else
            parse_sample(d, c, p, lineno);
        cur = c;
        p = nl + 1;
    }
    for (size_t i = 0; i < d->nfamilies; i++)
        if (!d->families[i].type)
            fail("family without TYPE", d->families[i].name);
    check_no_duplicates(d);
    check_samples(d);
    free(copy);
    copy = NULL;
    return 0;
}

static void doc_free(prom_doc *d)
{
    for (size_t i = 0; i < d->nsamples; i++) {
        free(d->samples[i].name);
        free(d->samples[i].family);
        for (size_t j = 0; j < d->samples[i].nlabels; j++) {
            free(d->samples[i].labels[j].name);
            free(d->samples[i].labels[j].value);
        }
    }
    for (size_t i = 0; i < d->nfamilies; i++) {
        free(d->families[i].name);
        free(d->families[i].type);
        free(d->families[i].help);
    }
    free(d->samples);
    free(d->families);
    memset(d, 0, sizeof(*d));
}

/* Parse text that must be valid (asserts). */
static void doc_parse(prom_doc *d, const char *text)
{
    if (doc_try_parse(d, text) != 0) {
        doc_free(d);
        cr_assert_fail("invalid exposition: %s\n%s", parse_error, text);
    }
}

/* Render and parse (asserting validity). */
static void render_parse(prom_doc *d)
{
    ncmp_buf out = NCMP_BUF_INIT;
    ncmp_metrics_render(&out);
    doc_parse(d, out.data);
    ncmp_buf_free(&out);
}

/* The value of the sample `name` whose labels include the given pairs
 * (NULL-terminated name/value list); NAN when there is none. */
static double sample_value(const prom_doc *d, const char *name, const char *const *labels)
{
    for (size_t i = 0; i < d->nsamples; i++) {
        const prom_sample *s = &d->samples[i];
        int ok = strcmp(s->name, name) == 0;
        for (const char *const *l = labels; ok && l && *l; l += 2) {
            const char *v = label_of(s, l[0]);
            ok = v && strcmp(v, l[1]) == 0;
        }
        if (ok)
            return s->value;
    }
    return NAN;
}

static size_t samples_named(const prom_doc *d, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nsamples; i++)
        n += strcmp(d->samples[i].name, name) == 0;
    return n;
}

/* --- the parser itself must refuse what is wrong ------------------------- */

static const char *const bad_expositions[] = {
    "x 1\n",                                          /* no TYPE */
    "# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n", /* duplicate */
    "# TYPE x counter\nx{a=\"1\\q\"} 1\n",            /* bad escape */
    "# TYPE x counter\nx{1a=\"1\"} 1\n",              /* bad label name */
    "# TYPE x counter\nx 1",                          /* no newline */
    "# TYPE x gauge\nx one\n",                        /* bad value */
    "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
    "h_sum 1\nh_count 1\n",                                              /* not cumulative */
    "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",    /* no +Inf */
    "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n", /* count */
    "# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\n# TYPE x gauge\n",        /* reopened */
    "# TYPE x gauge\n\nx 1\n",                                           /* empty line */
};

Test(ncmp_metrics, strict_parser_refuses_bad_expositions)
{
    for (size_t i = 0; i < sizeof(bad_expositions) / sizeof(bad_expositions[0]); i++) {
        prom_doc d;
        int rc = doc_try_parse(&d, bad_expositions[i]);
        doc_free(&d);
        cr_expect_eq(rc, -1, "the parser accepted bad exposition %zu:\n%s", i, bad_expositions[i]);
    }
}

/* --- the registry and the format ----------------------------------------- */

static const char *const role_topic[] = {"role", "topic", NULL};

Test(ncmp_metrics, counter_gauge_histogram_render_valid_text)
{
    static const double buckets[] = {0.5, 1, 5};
    ncmp_metric *c = ncmp_metrics_counter("t_records_total", "Records.", role_topic);
    ncmp_metric *g = ncmp_metrics_gauge("t_lag_records", "Lag.", role_topic);
    ncmp_metric *h = ncmp_metrics_histogram("t_seconds", "Latency.", NULL, buckets, 3);
    const char *v1[] = {"registration", "ncmp-dmi-registration"};
    const char *v2[] = {"ingest", "ncmp-ingest"};
    const char *const q1[] = {"role", "registration", "topic", "ncmp-dmi-registration", NULL};
    const char *const q2[] = {"role", "ingest", NULL};
    const char *const le05[] = {"le", "0.5", NULL};
    const char *const le1[] = {"le", "1", NULL};
    const char *const le5[] = {"le", "5", NULL};
    const char *const leinf[] = {"le", "+Inf", NULL};
    ncmp_histogram *hs = ncmp_histogram_get(h, NULL);
    prom_doc d;

    ncmp_counter_add(ncmp_counter_get(c, v1), 3);
    ncmp_counter_add(ncmp_counter_get(c, v1), 4);
    ncmp_counter_add(ncmp_counter_get(c, v2), 1);
    ncmp_gauge_set(ncmp_gauge_get(g, v1), 12);
    ncmp_gauge_add(ncmp_gauge_get(g, v1), -2.5);
    ncmp_histogram_observe(hs, 0.3);
    ncmp_histogram_observe(hs, 1);
    ncmp_histogram_observe(hs, 7);
    ncmp_histogram_observe(hs, NAN); /* ignored */

    render_parse(&d);
    cr_assert_eq(d.nfamilies, 3);
    cr_assert_str_eq(d.families[0].type, "counter");
    cr_assert_str_eq(d.families[1].type, "gauge");
    cr_assert_str_eq(d.families[2].type, "histogram");
    cr_assert_str_eq(d.families[0].help, "Records.");
    cr_assert_eq(sample_value(&d, "t_records_total", q1), 7);
    cr_assert_eq(sample_value(&d, "t_records_total", q2), 1);
    cr_assert_eq(sample_value(&d, "t_lag_records", q1), 9.5);
    cr_assert_eq(sample_value(&d, "t_seconds_bucket", le05), 1);
    cr_assert_eq(sample_value(&d, "t_seconds_bucket", le1), 2, "le is inclusive");
    cr_assert_eq(sample_value(&d, "t_seconds_bucket", le5), 2);
    cr_assert_eq(sample_value(&d, "t_seconds_bucket", leinf), 3);
    cr_assert_eq(sample_value(&d, "t_seconds_count", NULL), 3);
    cr_assert_float_eq(sample_value(&d, "t_seconds_sum", NULL), 8.3, 1e-9);
    cr_assert_eq(ncmp_counter_value(ncmp_counter_get(c, v1)), 7);
    cr_assert_eq(ncmp_gauge_value(ncmp_gauge_get(g, v1)), 9.5);
    doc_free(&d);
}

Test(ncmp_metrics, unlabelled_families_show_zero_before_use)
{
    prom_doc d;

    ncmp_metrics_counter("t_events_total", "Events.", NULL);
    ncmp_metrics_gauge("t_level", "Level.", NULL);
    ncmp_metrics_histogram("t_size", "Size.", NULL, ncmp_metrics_buckets_counts,
                           ncmp_metrics_buckets_counts_len);
    ncmp_metrics_counter("t_labelled_total", "Labelled, no series yet.", role_topic);
    render_parse(&d);
    cr_assert_eq(sample_value(&d, "t_events_total", NULL), 0);
    cr_assert_eq(sample_value(&d, "t_level", NULL), 0);
    cr_assert_eq(sample_value(&d, "t_size_count", NULL), 0);
    cr_assert_eq(samples_named(&d, "t_size_bucket"), ncmp_metrics_buckets_counts_len + 1);
    cr_assert_eq(samples_named(&d, "t_labelled_total"), 0);
    cr_assert_eq(d.nfamilies, 4, "a family without series still has HELP and TYPE");
    doc_free(&d);
}

Test(ncmp_metrics, bucket_bounds_and_values_read_back_exactly)
{
    ncmp_metric *g = ncmp_metrics_gauge("t_value", "Value.", (const char *const[]){"k", NULL});
    static const double values[] = {0.1, 1e-7, 123456789.125, -3, 1e300, 0.0005, 2.5};
    prom_doc d;
    ncmp_buf out = NCMP_BUF_INIT;

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char k[8];
        snprintf(k, sizeof(k), "%zu", i);
        ncmp_gauge_set(ncmp_gauge_get(g, (const char *[]){k}), values[i]);
    }
    ncmp_gauge_set(ncmp_gauge_get(g, (const char *[]){"inf"}), INFINITY);
    ncmp_gauge_set(ncmp_gauge_get(g, (const char *[]){"nan"}), NAN);
    ncmp_metrics_histogram("t_latency_seconds", "Latency.", NULL, ncmp_metrics_buckets_seconds,
                           ncmp_metrics_buckets_seconds_len);
    ncmp_metrics_render(&out);
    cr_assert(strstr(out.data, "t_value{k=\"0\"} 0.1\n"), "%s", out.data);
    cr_assert(strstr(out.data, "t_value{k=\"inf\"} +Inf\n"), "%s", out.data);
    cr_assert(strstr(out.data, "t_value{k=\"nan\"} NaN\n"), "%s", out.data);
    cr_assert(strstr(out.data, "t_latency_seconds_bucket{le=\"0.0005\"} 0\n"), "%s", out.data);
    doc_parse(&d, out.data);
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char k[8];
        snprintf(k, sizeof(k), "%zu", i);
        cr_assert_eq(sample_value(&d, "t_value", (const char *const[]){"k", k, NULL}), values[i]);
    }
    doc_free(&d);
    ncmp_buf_free(&out);
}

Test(ncmp_metrics, label_values_and_help_are_escaped)
{
    ncmp_metric *c = ncmp_metrics_counter("t_escaped_total", "Help with \\ and\na newline.",
                                          (const char *const[]){"v", NULL});
    const char *tricky = "back\\slash \"quoted\"\nnew line";
    const char *bad_utf8 = "caf\xc3 \xff end";
    const char *const q[] = {"v", "back\\slash \"quoted\"\nnew line", NULL};
    const char *const qbad[] = {"v", "caf? ? end", NULL};
    ncmp_buf out = NCMP_BUF_INIT;
    prom_doc d;

    ncmp_counter_add(ncmp_counter_get(c, &tricky), 2);
    ncmp_counter_add(ncmp_counter_get(c, &bad_utf8), 1);
    ncmp_counter_add(ncmp_counter_get(c, &bad_utf8), 1); /* the same series again */
    ncmp_metrics_render(&out);
    cr_assert(strstr(out.data, "# HELP t_escaped_total Help with \\\\ and\\na newline.\n"), "%s",
              out.data);
    cr_assert(
        strstr(out.data, "t_escaped_total{v=\"back\\\\slash \\\"quoted\\\"\\nnew line\"} 2\n"),
        "%s", out.data);
    doc_parse(&d, out.data);
    cr_assert_str_eq(d.families[0].help, "Help with \\ and\na newline.");
    cr_assert_eq(sample_value(&d, "t_escaped_total", q), 2);
    cr_assert_eq(sample_value(&d, "t_escaped_total", qbad), 2, "bad UTF-8 becomes '?'");
    cr_assert_eq(samples_named(&d, "t_escaped_total"), 2);
    doc_free(&d);
    ncmp_buf_free(&out);
}

Test(ncmp_metrics, same_registration_returns_the_same_family)
{
    ncmp_metric *a = ncmp_metrics_counter("t_same_total", "Same.", role_topic);
    ncmp_metric *b = ncmp_metrics_counter("t_same_total", "Same.", role_topic);
    const char *v[] = {"r", "t"};

    cr_assert_eq(a, b);
    cr_assert_eq(ncmp_counter_get(a, v), ncmp_counter_get(b, v));
}

Test(ncmp_metrics, conflicting_registration_aborts, .signal = SIGABRT)
{
    ncmp_metrics_counter("t_conflict", "A counter.", role_topic);
    ncmp_metrics_gauge("t_conflict", "Now a gauge.", role_topic);
}

Test(ncmp_metrics, bad_metric_name_aborts, .signal = SIGABRT)
{
    ncmp_metrics_counter("9starts_with_a_digit", "Bad.", NULL);
}

Test(ncmp_metrics, bad_label_name_aborts, .signal = SIGABRT)
{
    ncmp_metrics_counter("t_ok", "Bad label.", (const char *const[]){"has-dash", NULL});
}

Test(ncmp_metrics, histogram_label_le_aborts, .signal = SIGABRT)
{
    ncmp_metrics_histogram("t_hist", "Bad label.", (const char *const[]){"le", NULL},
                           ncmp_metrics_buckets_seconds, ncmp_metrics_buckets_seconds_len);
}

Test(ncmp_metrics, unordered_buckets_abort, .signal = SIGABRT)
{
    static const double buckets[] = {1, 0.5};
    ncmp_metrics_histogram("t_hist", "Bad buckets.", NULL, buckets, 2);
}

Test(ncmp_metrics, using_a_counter_as_a_gauge_aborts, .signal = SIGABRT)
{
    ncmp_metric *c = ncmp_metrics_counter("t_counter_total", "Counter.", NULL);
    ncmp_gauge_get(c, NULL);
}

Test(ncmp_metrics, series_beyond_the_cap_share_one_overflow_series)
{
    ncmp_metric *c =
        ncmp_metrics_counter("t_many_total", "Many.", (const char *const[]){"id", NULL});
    const char *const q[] = {"id", NCMP_METRICS_OVERFLOW, NULL};
    prom_doc d;

    for (int i = 0; i < NCMP_METRICS_MAX_SERIES + 50; i++) {
        char id[16];
        const char *v[1] = {id};
        snprintf(id, sizeof(id), "h%d", i);
        ncmp_counter_add(ncmp_counter_get(c, v), 1);
    }
    render_parse(&d);
    cr_assert_eq(samples_named(&d, "t_many_total"), NCMP_METRICS_MAX_SERIES + 1);
    cr_assert_eq(sample_value(&d, "t_many_total", q), 50);
    doc_free(&d);
}

/* --- concurrency --------------------------------------------------------- */

#define THREADS 8
#define ROUNDS  20000

typedef struct hammer_arg {
    ncmp_metric *c, *g, *h;
    int index;
} hammer_arg;

static void *hammer(void *p)
{
    hammer_arg *a = p;
    char mine[16];
    const char *shared[2] = {"shared", "topic"};
    const char *own[2] = {mine, "topic"};

    snprintf(mine, sizeof(mine), "t%d", a->index);
    for (int i = 0; i < ROUNDS; i++) {
        /* look up every time: series creation races with use */
        ncmp_counter_add(ncmp_counter_get(a->c, shared), 1);
        ncmp_counter_add(ncmp_counter_get(a->c, own), 2);
        ncmp_gauge_add(ncmp_gauge_get(a->g, shared), 1);
        ncmp_histogram_observe(ncmp_histogram_get(a->h, shared), (i % 3) * 0.5);
    }
    return NULL;
}

static volatile int render_stop;

static void *renderer(void *p)
{
    int *renders = p;
    while (!render_stop) {
        prom_doc d;
        render_parse(&d);
        doc_free(&d);
        (*renders)++;
    }
    return NULL;
}

Test(ncmp_metrics, concurrent_updates_are_exact_and_renders_stay_valid, .timeout = 60)
{
    static const double buckets[] = {0.25, 0.75};
    const char *const labels[] = {"role", "topic", NULL};
    hammer_arg args[THREADS];
    pthread_t threads[THREADS], render_thread;
    int renders = 0;
    const char *const q[] = {"role", "shared", NULL};
    prom_doc d;

    args[0].c = ncmp_metrics_counter("t_concurrent_total", "Concurrent.", labels);
    args[0].g = ncmp_metrics_gauge("t_concurrent_level", "Concurrent.", labels);
    args[0].h = ncmp_metrics_histogram("t_concurrent_seconds", "Concurrent.", labels, buckets, 2);
    render_stop = 0;
    pthread_create(&render_thread, NULL, renderer, &renders);
    for (int i = 0; i < THREADS; i++) {
        args[i] = args[0];
        args[i].index = i;
        pthread_create(&threads[i], NULL, hammer, &args[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    render_stop = 1;
    pthread_join(render_thread, NULL);
    cr_assert_gt(renders, 0);

    render_parse(&d);
    cr_assert_eq(sample_value(&d, "t_concurrent_total", q), THREADS * ROUNDS);
    for (int i = 0; i < THREADS; i++) {
        char mine[16];
        snprintf(mine, sizeof(mine), "t%d", i);
        cr_assert_eq(
            sample_value(&d, "t_concurrent_total", (const char *const[]){"role", mine, NULL}),
            2 * ROUNDS);
    }
    cr_assert_eq(samples_named(&d, "t_concurrent_total"), THREADS + 1);
    cr_assert_eq(sample_value(&d, "t_concurrent_level", q), THREADS * ROUNDS);
    cr_assert_eq(sample_value(&d, "t_concurrent_seconds_count", q), THREADS * ROUNDS);
    /* values 0, 0.5, 1 in turn: a third of them in each bucket */
    {
        double per = 0;
        for (int i = 0; i < ROUNDS; i++)
            per += (i % 3) == 0;
        cr_assert_eq(sample_value(&d, "t_concurrent_seconds_bucket",
                                  (const char *const[]){"role", "shared", "le", "0.25", NULL}),
                     THREADS * per);
        per = 0;
        for (int i = 0; i < ROUNDS; i++)
            per += (i % 3) * 0.5;
        cr_assert_float_eq(sample_value(&d, "t_concurrent_seconds_sum", q), THREADS * per, 1e-6);
    }
    doc_free(&d);
}

/* --- collectors ---------------------------------------------------------- */

typedef struct collect_arg {
    ncmp_gauge *g;
    int calls;
} collect_arg;

static void collect(void *p)
{
    collect_arg *a = p;
    a->calls++;
    ncmp_gauge_set(a->g, 40 + a->calls);
}

Test(ncmp_metrics, collectors_run_at_render_until_removed)
{
    ncmp_metric *m =
        ncmp_metrics_gauge("t_handles", "Handles by state.", (const char *const[]){"state", NULL});
    collect_arg a = {ncmp_gauge_get(m, (const char *[]){"READY"}), 0};
    const char *const q[] = {"state", "READY", NULL};
    int id = ncmp_metrics_collector_add(collect, &a);
    prom_doc d;

    cr_assert_gt(id, 0);
    render_parse(&d);
    cr_assert_eq(a.calls, 1);
    cr_assert_eq(sample_value(&d, "t_handles", q), 41);
    doc_free(&d);
    ncmp_metrics_collector_remove(id);
    ncmp_metrics_collector_remove(id + 100); /* unknown: ignored */
    render_parse(&d);
    cr_assert_eq(a.calls, 1, "a removed collector is not called");
    cr_assert_eq(sample_value(&d, "t_handles", q), 41);
    doc_free(&d);
}

/* --- the library's metrics ----------------------------------------------- */

Test(ncmp_metrics, http_observe_counts_by_route_and_status)
{
    const char *const ok[] = {"method", "GET", "route", "/ncmp/v1/ch/{ref}", "status", "200", NULL};
    const char *const nf[] = {"method", "GET", "route", "unmatched", "status", "404", NULL};
    const char *const lat[] = {"method", "GET", "route", "/ncmp/v1/ch/{ref}", NULL};
    prom_doc d;

    ncmp_metrics_http_observe("GET", "/ncmp/v1/ch/{ref}", 200, 0.002);
    ncmp_metrics_http_observe("GET", "/ncmp/v1/ch/{ref}", 200, 0.004);
    ncmp_metrics_http_observe("GET", NULL, 404, 0.001);
    render_parse(&d);
    cr_assert_eq(sample_value(&d, "ncmp_http_requests_total", ok), 2);
    cr_assert_eq(sample_value(&d, "ncmp_http_requests_total", nf), 1);
    cr_assert_eq(sample_value(&d, "ncmp_http_request_duration_seconds_count", lat), 2);
    cr_assert_float_eq(sample_value(&d, "ncmp_http_request_duration_seconds_sum", lat), 0.006,
                       1e-12);
    doc_free(&d);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    char chunk[4096];
    size_t n;

    if (!f)
        return NULL;
    out = open_memstream(&text, &len);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, out);
    fclose(out);
    fclose(f);
    return text;
}

/* The row of `name` in the doc's metrics table: "| `name` | type | labels |
 * meaning |". */
static const char *doc_row(const char *doc, const char *name, char *row, size_t len)
{
    char head[160];
    const char *p, *nl;

    snprintf(head, sizeof(head), "\n| `%s` |", name);
    p = strstr(doc, head);
    if (!p)
        return NULL;
    p++;
    nl = strchr(p, '\n');
    snprintf(row, len, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
    return row;
}

Test(ncmp_metrics, every_library_metric_is_documented)
{
    const char *path = NCMP_SOURCE_DIR "/docs/operations.md";
    char *doc = read_file(path);
    const ncmp_metrics_lib *lib = ncmp_metrics_lib_get();
    size_t nall = sizeof(*lib) / sizeof(ncmp_metric *);
    ncmp_buf out = NCMP_BUF_INIT;
    prom_doc d;

    cr_assert_not_null(doc, "cannot read %s", path);
    /* a series of every labelled family, so that label names show */
    ncmp_metrics_http_observe("GET", "/x", 200, 0.1);
    ncmp_metrics_render(&out);
    doc_parse(&d, out.data);
    cr_assert_eq(d.nfamilies, nall, "ncmp_metrics_lib lists every family it registers");
    for (size_t i = 0; i < d.nfamilies; i++) {
        char row[1024];
        const prom_family *f = &d.families[i];
        cr_assert_not_null(doc_row(doc, f->name, row, sizeof(row)),
                           "docs/operations.md has no row for metric %s", f->name);
        cr_expect(strstr(row, f->type), "the row of %s does not say %s", f->name, f->type);
    }
    /* every label a sample carries is named in its family's row */
    for (size_t i = 0; i < d.nsamples; i++) {
        char row[1024];
        doc_row(doc, d.samples[i].family, row, sizeof(row));
        for (size_t j = 0; j < d.samples[i].nlabels; j++) {
            char quoted[64];
            if (strcmp(d.samples[i].labels[j].name, "le") == 0)
                continue;
            snprintf(quoted, sizeof(quoted), "`%s`", d.samples[i].labels[j].name);
            cr_expect(strstr(row, quoted), "the row of %s does not name label %s",
                      d.samples[i].family, quoted);
        }
    }
    /* the label names of each family, from its registration */
    {
        static const struct {
            const char *name;
            const char *labels;
        } expect[] = {
            {"ncmp_consumed_records_total", "`role`, `topic`"},
            {"ncmp_batch_records", "`role`"},
            {"ncmp_batch_duration_seconds", "`role`"},
            {"ncmp_batch_retries_total", "`role`"},
            {"ncmp_dead_lettered_records_total", "`role`, `topic`"},
            {"ncmp_consumer_lag_records", "`role`, `topic`"},
            {"ncmp_produced_records_total", "`topic`"},
            {"ncmp_produce_failures_total", "`topic`"},
            {"ncmp_kafka_consumer_renewals_total", "`group`"},
            {"ncmp_db_statement_duration_seconds", "`statement`"},
            {"ncmp_db_reconnects_total", "(none)"},
            {"ncmp_http_requests_total", "`method`, `route`, `status`"},
            {"ncmp_http_request_duration_seconds", "`method`, `route`"},
            {"ncmp_inventory_handles", "`state`"},
            {"ncmp_http_requests_in_flight", "(none)"},
            {"ncmp_http_requests_queued", "(none)"},
            {"ncmp_shed_requests_total", "`reason`"},
            {"ncmp_dmi_requests_in_flight", "(none)"},
            {"ncmp_searches_total", "`path`"},
            {"ncmp_search_index_reads_total", "(none)"},
            {"ncmp_search_index_loads_total", "(none)"},
            {"ncmp_search_index_handles", "(none)"},
            {"ncmp_search_index_bytes", "(none)"},
            {"ncmp_data_sync_writers", "(none)"},
        };
        cr_assert_eq(sizeof(expect) / sizeof(expect[0]), nall);
        for (size_t i = 0; i < nall; i++) {
            char row[1024];
            cr_assert_not_null(family_get(&d, expect[i].name), "%s is not registered",
                               expect[i].name);
            cr_assert_not_null(doc_row(doc, expect[i].name, row, sizeof(row)));
            cr_expect(strstr(row, expect[i].labels), "the row of %s does not list labels %s",
                      expect[i].name, expect[i].labels);
        }
    }
    /* and the doc names no metric that does not exist */
    for (const char *p = strstr(doc, "\n| `ncmp_"); p; p = strstr(p + 1, "\n| `ncmp_")) {
        char name[128];
        const char *e = strchr(p + 4, '`');
        snprintf(name, sizeof(name), "%.*s", (int)(e - p - 4), p + 4);
        cr_expect_not_null(family_get(&d, name), "docs/operations.md documents %s, not registered",
                           name);
    }
    doc_free(&d);
    ncmp_buf_free(&out);
    free(doc);
}
