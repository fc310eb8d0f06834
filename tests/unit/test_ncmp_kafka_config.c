/* Unit tests of lib/ncmp_kafka_config.c: the service config's Kafka client
 * options. */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_config.h"
#include "ncmp_kafka_config.h"
#include "unit_leak.h"

TestSuite(ncmp_kafka_config, .fini = unit_leak_check);

Test(ncmp_kafka_config, options_are_borrowed_from_the_config)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_kafka_opts opts;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "kafka.bootstrap.servers", "broker-a:9092", &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.max-message-bytes", "4096", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.security.protocol", "SSL", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.linger.ms", "7", &err), 0, "%s", err.msg);
    ncmp_kafka_opts_from_config(&opts, cfg);
    cr_assert_str_eq(opts.bootstrap_servers, "broker-a:9092");
    cr_assert_eq(opts.bootstrap_servers, cfg->kafka_bootstrap_servers, "borrowed, not copied");
    cr_assert_eq(opts.max_message_bytes, 4096);
    cr_assert_eq(opts.nprops, 2);
    cr_assert_eq(opts.props, cfg->kafka_props);
    cr_assert_str_eq(opts.props[0].key, "security.protocol");
    cr_assert_str_eq(opts.props[1].value, "7");
    ncmp_config_destroy(cfg);
}

Test(ncmp_kafka_config, defaults_match_the_wrapper)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_kafka_opts opts;

    ncmp_kafka_opts_from_config(&opts, cfg);
    /* a tool without a config gets what the service gets by default */
    cr_assert_eq(opts.max_message_bytes, NCMP_KAFKA_MAX_MESSAGE_BYTES);
    cr_assert_eq(opts.nprops, 0);
    ncmp_config_destroy(cfg);
}
