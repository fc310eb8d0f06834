#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_text.h"

Test(ncmp_text, env_get_finds_exact_names_only)
{
    char *env[] = {"NCMP_A=1", "NCMP_AB=2", "NCMP_C=", "X", NULL};

    cr_assert_str_eq(ncmp_env_get(env, "NCMP_A"), "1");
    cr_assert_str_eq(ncmp_env_get(env, "NCMP_AB"), "2");
    cr_assert_str_eq(ncmp_env_get(env, "NCMP_C"), "", "set to empty is set");
    cr_assert_null(ncmp_env_get(env, "NCMP"));
    cr_assert_null(ncmp_env_get(env, "X"), "an entry without = has no value");
    cr_assert_null(ncmp_env_get(NULL, "NCMP_A"));
}

static int has(const char *list, char sep, const char *item)
{
    return ncmp_list_has(list, sep, item, strlen(item));
}

Test(ncmp_text, list_has_whole_items_with_blanks_ignored)
{
    cr_assert(has("ingest,registration", ',', "registration"));
    cr_assert(has(" ingest , registration ", ',', "ingest"));
    cr_assert(!has("ingest,registration", ',', "regist"));
    cr_assert(!has("ingest,registration", ',', "registration,"));
    cr_assert(has("text|json", '|', "json"));
    cr_assert(!has("text|json", ',', "json"), "the separator counts");
    cr_assert(!has("a,,b", ',', ""), "an empty item never matches");
    cr_assert(!has("", ',', "a"));
    cr_assert(!ncmp_list_has(NULL, ',', "a", 1));
}
