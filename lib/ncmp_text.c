#include "ncmp_text.h"

#include <string.h>

const char *ncmp_env_get(char **envp, const char *name)
{
    size_t n = strlen(name);

    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

int ncmp_list_has(const char *list, char sep, const char *item, size_t len)
{
    const char *p = list;

    if (!list || !item || !len)
        return 0;
    while (*p) {
        const char *end = strchr(p, sep);
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && *p == ' ')
            p++, n--;
        while (n && p[n - 1] == ' ')
            n--;
        if (n == len && strncmp(p, item, len) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

uint64_t ncmp_hash(const char *s, size_t n)
{
    uint64_t h = NCMP_FNV_BASIS;

    for (size_t i = 0; i < n; i++)
        h = NCMP_FNV_STEP(h, s[i]);
    return h;
}
