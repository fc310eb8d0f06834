/* Unit tests of lib/ncmp_log.c. Every test runs in its own process
 * (Criterion forks), so changing the logger's global setup is harmless;
 * the tests still point it back at stderr before closing their stream. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_log.h"
#include "unit_leak.h"

TestSuite(ncmp_log, .fini = unit_leak_check);

/* A log stream in memory. */
typedef struct capture {
    FILE *out;
    char *text;
    size_t len;
} capture;

static void capture_start(capture *c, ncmp_log_level level, ncmp_log_format format)
{
    c->text = NULL;
    c->len = 0;
    c->out = open_memstream(&c->text, &c->len);
    cr_assert_not_null(c->out);
    ncmp_log_setup(level, format, c->out);
}

/* Stops logging into c; c->text holds what was written (caller frees). */
static void capture_stop(capture *c)
{
    ncmp_log_setup(NCMP_LOG_INFO, NCMP_LOG_TEXT, NULL);
    fclose(c->out);
    c->out = NULL;
}

static int count_lines(const char *s)
{
    int n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(ncmp_log, level_parse_and_name)
{
    static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
    static const ncmp_log_level levels[] = {NCMP_LOG_ERROR, NCMP_LOG_WARN, NCMP_LOG_INFO,
                                            NCMP_LOG_DEBUG, NCMP_LOG_TRACE};

    for (size_t i = 0; i < 5; i++) {
        cr_expect_eq(ncmp_log_level_parse(names[i]), (int)levels[i], "%s", names[i]);
        cr_expect_str_eq(ncmp_log_level_name(levels[i]), names[i]);
    }
    cr_expect_eq(ncmp_log_level_parse("INFO"), -1);
    cr_expect_eq(ncmp_log_level_parse("warning"), -1);
    cr_expect_eq(ncmp_log_level_parse(""), -1);
    cr_expect_eq(ncmp_log_level_parse(NULL), -1);
    cr_expect_str_eq(ncmp_log_level_name((ncmp_log_level)17), "?");
}

Test(ncmp_log, format_parse)
{
    cr_assert_eq(ncmp_log_format_parse("text"), NCMP_LOG_TEXT);
    cr_assert_eq(ncmp_log_format_parse("json"), NCMP_LOG_JSON);
    cr_assert_eq(ncmp_log_format_parse("JSON"), -1);
    cr_assert_eq(ncmp_log_format_parse("xml"), -1);
    cr_assert_eq(ncmp_log_format_parse(NULL), -1);
}

Test(ncmp_log, level_from_syslog)
{
    /* LOG_EMERG..LOG_ERR, LOG_WARNING, LOG_NOTICE/LOG_INFO, LOG_DEBUG */
    static const ncmp_log_level expect[] = {NCMP_LOG_ERROR, NCMP_LOG_ERROR, NCMP_LOG_ERROR,
                                            NCMP_LOG_ERROR, NCMP_LOG_WARN,  NCMP_LOG_INFO,
                                            NCMP_LOG_INFO,  NCMP_LOG_DEBUG};

    for (int i = 0; i < 8; i++)
        cr_expect_eq(ncmp_log_level_from_syslog(i), expect[i], "syslog level %d", i);
}

Test(ncmp_log, threshold_drops_lower_levels)
{
    capture c;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_TEXT);
    cr_assert_eq(ncmp_log_threshold, NCMP_LOG_INFO);
    log_trace("test", "trace line");
    log_debug("test", "debug line");
    log_info("test", "info line");
    log_warn("test", "warn line");
    log_error("test", "error line");
    capture_stop(&c);
    cr_assert_null(strstr(c.text, "debug line"), "%s", c.text);
    cr_assert_null(strstr(c.text, "trace line"), "%s", c.text);
    cr_assert(strstr(c.text, "info line"), "%s", c.text);
    cr_assert(strstr(c.text, "warn line"), "%s", c.text);
    cr_assert(strstr(c.text, "error line"), "%s", c.text);
    cr_assert_eq(count_lines(c.text), 3, "%s", c.text);
    free(c.text);
}

Test(ncmp_log, threshold_error_keeps_only_errors)
{
    capture c;

    capture_start(&c, NCMP_LOG_ERROR, NCMP_LOG_TEXT);
    log_warn("test", "warn line");
    log_error("test", "error line");
    capture_stop(&c);
    cr_assert_eq(count_lines(c.text), 1, "%s", c.text);
    cr_assert(strstr(c.text, "error line"), "%s", c.text);
    free(c.text);
}

static int formatted;

static int format_argument(void)
{
    return ++formatted;
}

Test(ncmp_log, level_checked_before_formatting)
{
    capture c;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_TEXT);
    formatted = 0;
    log_debug("test", "value %d", format_argument());
    cr_assert_eq(formatted, 0, "arguments of a dropped line were evaluated");
    log_info("test", "value %d", format_argument());
    cr_assert_eq(formatted, 1);
    capture_stop(&c);
    cr_assert(strstr(c.text, "value 1"), "%s", c.text);
    free(c.text);
}

Test(ncmp_log, text_line_has_time_level_component_message)
{
    capture c;
    int y, mo, d, h, mi, s, ms;
    char level[16], rest[256];

    capture_start(&c, NCMP_LOG_DEBUG, NCMP_LOG_TEXT);
    log_warn("registration", "topic=%s partition=%d offset=%ld", "t1", 3, 42L);
    capture_stop(&c);
    cr_assert_eq(count_lines(c.text), 1, "%s", c.text);
    cr_assert_eq(sscanf(c.text, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ %15s %255[^\n]", &y, &mo, &d, &h, &mi,
                        &s, &ms, level, rest),
                 9, "%s", c.text);
    cr_assert_geq(y, 2020);
    cr_assert_str_eq(level, "warn");
    cr_assert_str_eq(rest, "[registration] topic=t1 partition=3 offset=42");
    free(c.text);
}

Test(ncmp_log, text_line_without_component)
{
    capture c;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_TEXT);
    ncmp_log_write(NCMP_LOG_ERROR, NULL, "no component");
    capture_stop(&c);
    cr_assert(strstr(c.text, " error [-] no component\n"), "%s", c.text);
    free(c.text);
}

/* Parses the one JSON line of text; the caller puts the object. */
static json_object *parse_json_line(const char *text)
{
    size_t len = strlen(text);
    json_tokener *tok = json_tokener_new();
    json_object *obj;

    cr_assert_gt(len, 0);
    cr_assert_eq(text[len - 1], '\n', "line not terminated: %s", text);
    cr_assert_eq(count_lines(text), 1, "a message broke the line: %s", text);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    obj = json_tokener_parse_ex(tok, text, (int)len - 1);
    cr_assert_eq(json_tokener_get_error(tok), json_tokener_success, "not JSON (%s): %s",
                 json_tokener_error_desc(json_tokener_get_error(tok)), text);
    cr_assert_eq(json_tokener_get_parse_end(tok), len - 1, "trailing data: %s", text);
    json_tokener_free(tok);
    cr_assert(json_object_is_type(obj, json_type_object), "%s", text);
    return obj;
}

static const char *string_member(json_object *obj, const char *key)
{
    json_object *v = NULL;

    cr_assert(json_object_object_get_ex(obj, key, &v), "no field %s", key);
    cr_assert(json_object_is_type(v, json_type_string), "field %s is no string", key);
    return json_object_get_string(v);
}

Test(ncmp_log, json_line_is_valid_json_with_fields)
{
    capture c;
    json_object *obj;
    const char *ts;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_JSON);
    log_warn("db", "handle=%d lost", 7);
    capture_stop(&c);
    obj = parse_json_line(c.text);
    ts = string_member(obj, "ts");
    cr_assert_eq(strlen(ts), strlen("2024-01-01T00:00:00.000Z"), "ts %s", ts);
    cr_assert_eq(ts[10], 'T', "ts %s", ts);
    cr_assert_eq(ts[23], 'Z', "ts %s", ts);
    cr_assert_str_eq(string_member(obj, "level"), "warn");
    cr_assert_str_eq(string_member(obj, "component"), "db");
    cr_assert_str_eq(string_member(obj, "msg"), "handle=7 lost");
    cr_assert_eq(json_object_object_length(obj), 4);
    json_object_put(obj);
    free(c.text);
}

Test(ncmp_log, json_line_escapes_the_message)
{
    static const char msg[] = "say \"hi\"\nsecond line\twith \\ and \x01 and \r";
    static const char component[] = "we\"ird";
    capture c;
    json_object *obj;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_JSON);
    log_error(component, "%s", msg);
    capture_stop(&c);
    obj = parse_json_line(c.text);
    cr_assert_str_eq(string_member(obj, "msg"), msg);
    cr_assert_str_eq(string_member(obj, "component"), component);
    cr_assert_str_eq(string_member(obj, "level"), "error");
    json_object_put(obj);
    free(c.text);
}

Test(ncmp_log, json_line_without_component)
{
    capture c;
    json_object *obj;

    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_JSON);
    ncmp_log_write(NCMP_LOG_INFO, NULL, "x");
    capture_stop(&c);
    obj = parse_json_line(c.text);
    cr_assert_str_eq(string_member(obj, "component"), "");
    json_object_put(obj);
    free(c.text);
}

Test(ncmp_log, long_message_is_cut_not_overflowed)
{
    char big[10000];
    capture c;

    memset(big, 'L', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    capture_start(&c, NCMP_LOG_INFO, NCMP_LOG_TEXT);
    log_info("test", "%s", big);
    capture_stop(&c);
    cr_assert_eq(count_lines(c.text), 1);
    cr_assert_lt(strlen(c.text), sizeof(big));
    cr_assert(strstr(c.text, "LLLL"), "%s", c.text);
    free(c.text);
}
