/* The entry points of the ncmp_cpspath fuzz target (fuzz_cpspath.h). */
#include "fuzz_cpspath.h"

const char fuzz_target_name[] = "cpspath";

const fuzz_dict *fuzz_target_tokens(void)
{
    return &fuzz_cpspath_dict;
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

int fuzz_target_run(const uint8_t *data, size_t size, unsigned long run)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    int accepted = fuzz_cpspath_check(data, size, 1 + (int)(run % 3), &sql, &params);

    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
    return accepted;
}
