/* Unit tests of lib/ncmp_err.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_err.h"
#include "unit_leak.h"

TestSuite(ncmp_err, .fini = unit_leak_check);

Test(ncmp_err, set_fills_class_and_message_and_returns_minus_one)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_err_set(&err, NCMP_ERR_REJECT, "field '%s' bad at %d", "x", 7), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert_str_eq(err.msg, "field 'x' bad at 7");
}

Test(ncmp_err, set_and_prefix_accept_null)
{
    cr_assert_eq(ncmp_err_set(NULL, NCMP_ERR_FATAL, "nobody listens"), -1);
    cr_assert_eq(ncmp_err_prefix(NULL, "context"), -1);
    ncmp_err_clear(NULL);
}

Test(ncmp_err, set_truncates_long_messages)
{
    ncmp_err err = {0};
    char long_text[2 * NCMP_ERR_MSG_MAX];

    memset(long_text, 'z', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    ncmp_err_set(&err, NCMP_ERR_RETRY, "%s", long_text);
    cr_assert_eq(strlen(err.msg), NCMP_ERR_MSG_MAX - 1);
    cr_assert_eq(err.cls, NCMP_ERR_RETRY);
}

Test(ncmp_err, prefix_adds_context_and_keeps_class)
{
    ncmp_err err = {0};

    ncmp_err_set(&err, NCMP_ERR_RETRY, "connection refused");
    cr_assert_eq(ncmp_err_prefix(&err, "connecting to %s", "db"), -1);
    cr_assert_str_eq(err.msg, "connecting to db: connection refused");
    ncmp_err_prefix(&err, "starting");
    cr_assert_str_eq(err.msg, "starting: connecting to db: connection refused");
    cr_assert_eq(err.cls, NCMP_ERR_RETRY);
}

Test(ncmp_err, prefix_of_a_full_message_stays_terminated)
{
    ncmp_err err = {0};
    char long_text[NCMP_ERR_MSG_MAX];

    memset(long_text, 'm', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    ncmp_err_set(&err, NCMP_ERR_FATAL, "%s", long_text);
    ncmp_err_prefix(&err, "ctx");
    cr_assert_eq(strlen(err.msg), NCMP_ERR_MSG_MAX - 1);
    cr_assert_eq(strncmp(err.msg, "ctx: mmm", 8), 0);
}

Test(ncmp_err, clear_resets)
{
    ncmp_err err = {0};

    ncmp_err_set(&err, NCMP_ERR_FATAL, "bad");
    ncmp_err_clear(&err);
    cr_assert_eq(err.cls, NCMP_ERR_NONE);
    cr_assert_str_eq(err.msg, "");
}

Test(ncmp_err, class_names)
{
    cr_assert_str_eq(ncmp_err_class_name(NCMP_ERR_NONE), "none");
    cr_assert_str_eq(ncmp_err_class_name(NCMP_ERR_RETRY), "retry");
    cr_assert_str_eq(ncmp_err_class_name(NCMP_ERR_REJECT), "reject");
    cr_assert_str_eq(ncmp_err_class_name(NCMP_ERR_FATAL), "fatal");
    cr_assert_str_eq(ncmp_err_class_name((ncmp_err_class)42), "unknown");
}
