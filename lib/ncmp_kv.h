/*
 * ncmp_kv: a key and its value, both strings.
 *
 * On its own so that modules that take lists of settings (ncmp_kafka's
 * pass-through properties) need not include the service config that
 * collects them (ncmp_config).
 */
#ifndef NCMP_KV_H
#define NCMP_KV_H

typedef struct ncmp_kv {
    char *key;
    char *value;
} ncmp_kv;

#endif
