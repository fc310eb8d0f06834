/* The entry points of the cps_query fuzz target (fuzz_cps_query.h). */
#include "fuzz_cps_query.h"

const char fuzz_target_name[] = "cps_query";

const fuzz_dict *fuzz_target_tokens(void)
{
    return &fuzz_cpspath_dict;
}

/* The anchors' parameter first, or after values of the caller's own. */
static int fuzz_check(const uint8_t *data, size_t size, unsigned long choice)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    cps_query_kind kind;
    int anchors = 1 + (int)(choice % 3);
    int accepted = fuzz_cps_query_check(data, size, anchors, anchors + 1 + (int)(choice % 2), &sql,
                                        &params, &kind);

    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
    return accepted;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_check(data, size, size);
    return 0;
}

int fuzz_target_run(const uint8_t *data, size_t size, unsigned long run)
{
    return fuzz_check(data, size, run);
}
