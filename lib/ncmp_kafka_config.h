/*
 * ncmp_kafka_config: the Kafka client options of the service config.
 *
 * An adapter of its own, so that ncmp_kafka does not depend on the
 * service config (the tools, the DMI stub and the benchmarks make clients
 * without one) and the config does not depend on librdkafka.
 */
#ifndef NCMP_KAFKA_CONFIG_H
#define NCMP_KAFKA_CONFIG_H

#include "ncmp_config.h"
#include "ncmp_kafka.h"

/* Fill *opts from cfg: kafka.bootstrap.servers, kafka.max-message-bytes
 * and the kafka.* pass-through properties. The strings are borrowed from
 * cfg, which must outlive *opts. */
void ncmp_kafka_opts_from_config(ncmp_kafka_opts *opts, const ncmp_config *cfg);

#endif
