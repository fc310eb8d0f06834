/* Builds without lib/ncmp_cpspath.c (the CPS-path translator lands on its
 * own branch): cmHandleWithCpsPath is then refused with a 400 that says
 * so. Compiled only when that file is absent (workers/CMakeLists.txt). */
#include <stdlib.h>

#include "ncmp_cpspath.h"

int ncmp_cpspath_to_sql(const char *path, int first_param, ncmp_buf *sql,
                        ncmp_cpspath_params *params, ncmp_err *err)
{
    return ncmp_err_set(err, NCMP_ERR_REJECT,
                        "CPS-path conditions are not available in this build");
}

void ncmp_cpspath_params_free(ncmp_cpspath_params *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->values[i]);
    free(p->values);
    p->values = NULL;
    p->n = 0;
}
