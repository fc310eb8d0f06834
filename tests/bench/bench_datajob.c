#include "bench_datajob.h"

static long draw(unsigned long long *s, long n)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (long)(*s % (unsigned long long)n) + 1;
}

void bench_datajob_body(ncmp_buf *out, long ops, long first, long handles, unsigned long long *seed)
{
    ncmp_buf_append_str(out, "{\"dataJobMetadata\":{\"destination\":\"device/managed-element-"
                             "collection\",\"dataAcceptType\":\"application/json\","
                             "\"dataContentType\":\"application/merge-patch+json\"},"
                             "\"dataJobWriteRequest\":{\"data\":[");
    for (long i = 1; i <= ops / 2; i++) {
        long id = first - 1 + draw(seed, handles);
        ncmp_buf_appendf(
            out,
            "%s{\"path\":\"/SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode"
            "%ld/ManagedElement=MyManagedElement%ld/SomeChild=child-1\",\"op\":\"add\","
            "\"operationId\":\"%ld-1\",\"value\":{\"key\":\"some-value-one-%ld\"}},"
            "{\"path\":\"/SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode"
            "%ld/ManagedElement=MyManagedElement%ld/SomeChild=child-2/SomeGrandChild="
            "grand-child-2\",\"op\":\"merge\",\"operationId\":\"%ld-2\",\"value\":{"
            "\"key\":\"some-value-two-%ld\"}}",
            i > 1 ? "," : "", id, id, i, i, id, id, i, i);
    }
    ncmp_buf_append_str(out, "]}}");
}
