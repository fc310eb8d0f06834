#include "ncmp_kafka_config.h"

void ncmp_kafka_opts_from_config(ncmp_kafka_opts *opts, const ncmp_config *cfg)
{
    opts->bootstrap_servers = cfg->kafka_bootstrap_servers;
    opts->max_message_bytes = cfg->kafka_max_message_bytes;
    opts->props = cfg->kafka_props;
    opts->nprops = cfg->kafka_props_len;
}
