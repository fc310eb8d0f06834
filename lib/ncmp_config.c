#include "ncmp_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncmp_buf.h"
#include "ncmp_text.h"

#define OFF(field) offsetof(ncmp_config, field)

/* clang-format off */
const ncmp_option ncmp_options[] = {
    {"config", NCMP_OPT_STRING, "", NULL, 0, 0, 0, (size_t)-1,
     "Configuration file of `key = value` lines (read before the environment and flags)."},

    {"db.url", NCMP_OPT_STRING, "postgresql://ncmpd@127.0.0.1:5432/ncmpd", NULL, 0, 0, 0, OFF(db_url),
     "PostgreSQL connection string (URI or key=value form). Put the password in db.password."},
    {"db.password", NCMP_OPT_STRING, "", NULL, 0, 0, 1, OFF(db_password),
     "PostgreSQL password; overrides one in db.url. Never logged or dumped."},
    {"db.connect-timeout-s", NCMP_OPT_INT, "10", NULL, 1, 3600, 0, OFF(db_connect_timeout_s),
     "Seconds to wait for one connection attempt."},
    {"db.migrate-on-start", NCMP_OPT_BOOL, "true", NULL, 0, 0, 0, OFF(db_migrate_on_start),
     "Apply pending migrations when the service starts (otherwise run `ncmpd migrate`)."},

    {"kafka.bootstrap.servers", NCMP_OPT_STRING, "127.0.0.1:9092", NULL, 0, 0, 0, OFF(kafka_bootstrap_servers),
     "Kafka brokers, host:port[,host:port...]."},
    {"kafka.group.id", NCMP_OPT_STRING, "ncmp-group", NULL, 0, 0, 0, OFF(kafka_group_id),
     "Consumer group prefix; each worker role consumes in group `<prefix>-<role>`."},
    {"kafka.instance-id", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(kafka_instance_id),
     "Stable name of this process for static group membership (e.g. its host name in a "
     "StatefulSet): a restarted process gets its partitions back at once instead of after the "
     "session timeout. Unique per running process; empty for dynamic membership."},
    {"kafka.topic-partitions", NCMP_OPT_INT, "6", NULL, 1, 10000, 0, OFF(kafka_topic_partitions),
     "Partitions of the topics that `ncmpd create-topics` creates."},
    {"kafka.max-message-bytes", NCMP_OPT_INT, "16777216", NULL, 1024, 1000000000, 0, OFF(kafka_max_message_bytes),
     "Largest record ncmpd produces or accepts; larger input goes to the dead-letter topic."},

    {"roles", NCMP_OPT_STRING, "all", NULL, 0, 0, 0, OFF(roles),
     "Comma-separated worker roles this process runs, or `all`. Roles: ingest, registration, module-sync, trust, lcm-relay, rest, cps, cps-relay, avc-forward, avc-apply, async-forward, data-sync."},
    {"shutdown-timeout-s", NCMP_OPT_INT, "30", NULL, 1, 3600, 0, OFF(shutdown_timeout_s),
     "Seconds a graceful stop may take before the process exits anyway."},
    {"memory-trim-interval-s", NCMP_OPT_INT, "10", NULL, 0, 3600, 0, OFF(memory_trim_interval_s),
     "Every this many seconds, give the memory the allocator holds free back to the system "
     "(malloc_trim); 0: never. Without it, a process that applied a large registration keeps "
     "the memory of its batches: at 200,000 handles 1 GB instead of the 341 MB it needs."},

    {"log.level", NCMP_OPT_STRING, "info", "error|warn|info|debug|trace", 0, 0, 0, OFF(log_level),
     "Log threshold."},
    {"log.format", NCMP_OPT_STRING, "text", "text|json", 0, 0, 0, OFF(log_format),
     "Log line format: human text or JSON lines."},

    {"ingest.topic", NCMP_OPT_STRING, "ncmp-ingest", NULL, 0, 0, 0, OFF(ingest_topic),
     "Topic of the ingest role: JSON events stored one row each in table ingest_event."},
    {"ingest.workers", NCMP_OPT_INT, "2", NULL, 1, 256, 0, OFF(ingest_workers),
     "Consumer threads of the ingest role (each with its own database connection)."},
    {"ingest.batch-size", NCMP_OPT_INT, "1000", NULL, 1, 1000000, 0, OFF(ingest_batch_size),
     "Most records one ingest transaction takes."},
    {"ingest.batch-wait-ms", NCMP_OPT_INT, "50", NULL, 0, 60000, 0, OFF(ingest_batch_wait_ms),
     "Longest wait to fill an ingest batch before processing what arrived."},

    {"registration.topic", NCMP_OPT_STRING, "ncmp-dmi-registration", NULL, 0, 0, 0, OFF(registration_topic),
     "Topic of DMI plugin registration requests (CloudEvents whose data is NCMP's DmiPluginRegistration)."},
    {"registration.response-topic", NCMP_OPT_STRING, "ncmp-dmi-registration-response", NULL, 0, 0, 0,
     OFF(registration_response_topic),
     "Topic of the outcome of each registration request, keyed by the request's ce_id."},
    {"registration.workers", NCMP_OPT_INT, "2", NULL, 1, 256, 0, OFF(registration_workers),
     "Consumer threads of the registration role (each with its own database connection)."},
    {"registration.batch-size", NCMP_OPT_INT, "8", NULL, 1, 100000, 0, OFF(registration_batch_size),
     "Most registration requests one transaction takes (a request may hold any number of handles)."},
    {"registration.batch-wait-ms", NCMP_OPT_INT, "20", NULL, 0, 60000, 0, OFF(registration_batch_wait_ms),
     "Longest wait to fill a registration batch before processing what arrived."},
    {"dmi.allowed-url-pattern", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(dmi_allowed_url_pattern),
     "POSIX extended regular expression a DMI plugin URL must match whole; empty: any http or https URL with a host."},
    {"dmi.auth-username", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(dmi_auth_username),
     "User name of HTTP Basic authentication on every DMI call; empty: no credentials are sent "
     "(NCMP's default is Basic auth as cpsuser; set it to match) and a client's Authorization "
     "header is forwarded on data calls instead."},
    {"dmi.auth-password", NCMP_OPT_STRING, "", NULL, 0, 0, 1, OFF(dmi_auth_password),
     "Password of HTTP Basic authentication to DMI plugins (with dmi.auth-username). Never logged or dumped."},
    {"dmi.connect-timeout-ms", NCMP_OPT_INT, "30000", NULL, 1, 3600000, 0, OFF(dmi_connect_timeout_ms),
     "Milliseconds one connection attempt to a DMI plugin may take."},
    {"dmi.response-timeout-ms", NCMP_OPT_INT, "60000", NULL, 1, 3600000, 0, OFF(dmi_response_timeout_ms),
     "Milliseconds a whole DMI call may take, from submission (waiting for a free connection "
     "included) to the last byte of the response."},
    {"dmi.max-connections-per-host", NCMP_OPT_INT, "256", NULL, 1, 100000, 0, OFF(dmi_max_connections_per_host),
     "Most open connections to one DMI plugin (host and port); further calls wait for a free one."},
    {"dmi.max-connections", NCMP_OPT_INT, "1024", NULL, 1, 100000, 0, OFF(dmi_max_connections),
     "Most open connections to all DMI plugins together, idle kept-alive ones included."},
    {"dmi.max-in-flight-per-plugin", NCMP_OPT_INT, "1024", NULL, 0, 1000000, 0, OFF(dmi_max_in_flight_per_plugin),
     "Requests to one DMI plugin (scheme, host and port) sent or waiting for a connection and not "
     "answered yet; one more fails at once without being sent (a REST caller gets 503 with "
     "Retry-After, module and data sync retry later), so that a slow plugin cannot hold every "
     "connection and all memory. 0: no limit."},
    {"dmi.data-threads", NCMP_OPT_INT, "2", NULL, 1, 64, 0, OFF(dmi_data_threads),
     "Event threads of the rest role's DMI calls (pass-through, ProvMnS, batch reads, data jobs, "
     "policy checks), each a DMI client of its own with its own connections; a call goes to the "
     "next in turn, so that a burst of calls and answers is worked on by several cores. The "
     "limits per plugin (dmi.max-connections-per-host, dmi.max-in-flight-per-plugin) and "
     "dmi.max-connections are shared out among them, each taking its share rounded up. Module "
     "and data sync and the trust checks have a client of their own."},
    {"dmi.max-response-bytes", NCMP_OPT_INT, "67108864", NULL, 1024, 1000000000, 0, OFF(dmi_max_response_bytes),
     "Largest DMI response body accepted; a larger one fails the call."},
    {"module-sync.topic", NCMP_OPT_STRING, "ncmp-module-sync", NULL, 0, 0, 0, OFF(module_sync_topic),
     "Topic that hands CM handles to module sync, keyed by module-set tag (or handle id when untagged)."},
    {"module-sync.workers", NCMP_OPT_INT, "4", NULL, 1, 256, 0, OFF(module_sync_workers),
     "Consumer threads of the module-sync role (they mostly wait for DMI plugins)."},
    {"module-sync.batch-size", NCMP_OPT_INT, "64", NULL, 1, 100000, 0, OFF(module_sync_batch_size),
     "Most module-sync records one transaction takes (a record names up to 5000 handles)."},
    {"module-sync.batch-wait-ms", NCMP_OPT_INT, "5", NULL, 0, 60000, 0, OFF(module_sync_batch_wait_ms),
     "Longest wait to fill a module-sync batch before processing what arrived."},
    {"module-sync.retry-initial-ms", NCMP_OPT_INT, "5000", NULL, 0, 86400000, 0, OFF(module_sync_retry_initial_ms),
     "Wait before the first retry of a handle whose module sync failed; doubled after each further failure (not after a 503: a busy DMI plugin is asked again after this wait)."},
    {"module-sync.retry-max-ms", NCMP_OPT_INT, "600000", NULL, 0, 86400000, 0, OFF(module_sync_retry_max_ms),
     "Longest wait between two module-sync attempts of a handle."},
    {"module-sync.sweep-interval-ms", NCMP_OPT_INT, "5000", NULL, 100, 86400000, 0, OFF(module_sync_sweep_interval_ms),
     "How often the sweep looks for handles due for a retry (one process sweeps at a time)."},
    {"module-sync.advised-grace-ms", NCMP_OPT_INT, "60000", NULL, 0, 86400000, 0, OFF(module_sync_advised_grace_ms),
     "Age after which the sweep hands an ADVISED handle (or one locked for upgrade) to module sync again; the sweep looks for such handles every half of it (at most every sweep)."},
    {"module-sync.cleanup-interval-s", NCMP_OPT_INT, "300", NULL, 1, 86400, 0, OFF(module_sync_cleanup_interval_s),
     "How often module sets and YANG sources that no handle uses any more are deleted, and the module-sync retries of handles deregistered while they waited."},
    {"lcm.topic", NCMP_OPT_STRING, "ncmp-events", NULL, 0, 0, 0, OFF(lcm_topic),
     "Topic of CM-handle lifecycle events (NCMP LCM v1 or v2, lcm.event-schema-version), keyed by handle id."},
    {"lcm.java-serialized-headers", NCMP_OPT_BOOL, "true", NULL, 0, 0, 0, OFF(lcm_java_serialized_headers),
     "Write lifecycle event headers as Java-serialised strings, as NCMP's Java producer does; false writes plain strings."},
    {"lcm.event-schema-version", NCMP_OPT_STRING, "v1", "v1|v2", 0, 0, 0, OFF(lcm_event_schema_version),
     "Format of lifecycle events, as NCMP's app.lcm.events.event-schema-version: v1 (NCMP's default) or v2 (lcm-event-v2.json: only what changed, as free maps, header eventSchema org.onap.ncmp:cmhandle-lcm-event.v2). Each event keeps the format it was written in until it is published."},
    {"lcm.relay-batch-size", NCMP_OPT_INT, "5000", NULL, 1, 1000000, 0, OFF(lcm_relay_batch_size),
     "Most outbox events the lifecycle relay publishes per round."},
    {"trust.heartbeat-topic", NCMP_OPT_STRING, "dmi-device-heartbeat", NULL, 0, 0, 0, OFF(trust_heartbeat_topic),
     "Topic of device heartbeats (CloudEvents: handle id in ce_id, data {\"data\":{\"trustLevel\":..}}) the trust role consumes."},
    {"trust.inventory-events-topic", NCMP_OPT_STRING, "ncmp-inventory-events", NULL, 0, 0, 0, OFF(trust_inventory_events_topic),
     "Topic of inventory AVC events (a handle's effective trust level changed), keyed by handle id."},
    {"trust.workers", NCMP_OPT_INT, "2", NULL, 1, 256, 0, OFF(trust_workers),
     "Consumer threads of the trust role (each with its own database connection)."},
    {"trust.batch-size", NCMP_OPT_INT, "5000", NULL, 1, 1000000, 0, OFF(trust_batch_size),
     "Most device heartbeats one trust transaction takes."},
    {"trust.batch-wait-ms", NCMP_OPT_INT, "50", NULL, 0, 60000, 0, OFF(trust_batch_wait_ms),
     "Longest wait to fill a trust batch before processing what arrived."},
    {"trust.dmi-check-interval-ms", NCMP_OPT_INT, "30000", NULL, 100, 86400000, 0, OFF(trust_dmi_check_interval_ms),
     "Pause between two health checks of every DMI plugin (NCMP's "
     "ncmp.timers.trust-level.dmi-availability-watchdog-ms); one process checks at a time. "
     "Runs in processes with the trust role."},
    {"trust.dmi-check-timeout-ms", NCMP_OPT_INT, "10000", NULL, 1, 3600000, 0, OFF(trust_dmi_check_timeout_ms),
     "Milliseconds one DMI health check may take; no answer in time counts as down (trust NONE)."},

    {"http.host", NCMP_OPT_STRING, "0.0.0.0", NULL, 0, 0, 0, OFF(http_host),
     "Address the REST API listens on (a name or a numeric IPv4/IPv6 address)."},
    {"http.port", NCMP_OPT_INT, "8883", NULL, 0, 65535, 0, OFF(http_port),
     "Port of the REST API; 0 picks a free port (logged as `http listening on <host>:<port>`)."},
    {"http.threads", NCMP_OPT_INT, "8", NULL, 1, 256, 0, OFF(http_threads),
     "Server threads of the REST API; each serves many kept-alive connections, reads requests, "
     "sends answers (streamed search answers read their next rows from PostgreSQL there) and "
     "runs the handlers that never wait (probes, pass-through, ProvMnS)."},
    {"http.max-in-flight", NCMP_OPT_INT, "256", NULL, 0, 1000000, 0, OFF(http_max_in_flight),
     "Requests the REST API serves at once (from their headers until their answer is sent, waits "
     "on DMI plugins included); one more is answered 503 with Retry-After at once, before its body "
     "is read. /actuator paths are never refused. 0: no limit."},
    {"http.worker-threads", NCMP_OPT_INT, "8", NULL, 0, 256, 0, OFF(http_worker_threads),
     "Threads that run the REST API's handlers that may block (searches, inventory and CPS "
     "requests: anything that waits on the database), so that the server threads (http.threads) "
     "stay free for probes, pass-through and ProvMnS, which answer from memory and wait on DMI "
     "plugins without a thread. 0: every handler runs on the server threads."},
    {"http.max-queued", NCMP_OPT_INT, "256", NULL, 0, 1000000, 0, OFF(http_max_queued),
     "Requests waiting for a worker thread (http.worker-threads) beyond which a new one is "
     "answered 503 with Retry-After at once. 0: no limit."},
    {"http.max-queue-wait-ms", NCMP_OPT_INT, "2000", NULL, 0, 3600000, 0, OFF(http_max_queue_wait_ms),
     "A request that waited longer for a worker thread is answered 503 with Retry-After instead "
     "of being run, so that under overload the queue sheds what its clients have likely given up "
     "on rather than making every later request wait longer. 0: no limit."},
    {"http.retry-after-s", NCMP_OPT_INT, "1", NULL, 1, 3600, 0, OFF(http_retry_after_s),
     "Retry-After (seconds) of every 503 that refuses a request for load: http.max-in-flight, "
     "dmi.max-in-flight-per-plugin, no database connection free within the wait."},
    {"http.max-body-bytes", NCMP_OPT_INT, "16777216", NULL, 1024, 1000000000, 0, OFF(http_max_body_bytes),
     "Largest request body accepted; a larger one is answered 413."},
    {"http.auth-username", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(http_auth_username),
     "User name of HTTP Basic authentication on the REST API; empty: no authentication."},
    {"http.auth-password", NCMP_OPT_STRING, "", NULL, 0, 0, 1, OFF(http_auth_password),
     "Password of HTTP Basic authentication. Never logged or dumped."},
    {"http.auth-mode", NCMP_OPT_STRING, "auto", "auto|none|basic|jwt", 0, 0, 0, OFF(http_auth_mode),
     "Authentication on the REST API: `jwt` takes bearer tokens (OAuth2 resource server, as NCMP "
     "with security.auth.enabled), `basic` HTTP Basic, `none` nothing; `auto` is `basic` when "
     "http.auth-username is set, otherwise `none`. Paths under /actuator, /swagger-ui and /api-docs "
     "are always open. A refused request is a 401 with WWW-Authenticate."},
    {"http.jwt-jwks-file", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(http_jwt_jwks_file),
     "JWK set file (RFC 7517) of the token signers' public keys (RSA for RS256/384/512, EC P-256/384/521 "
     "for ES256/384/512), read at start (jwt mode)."},
    {"http.jwt-jwks-url", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(http_jwt_jwks_url),
     "URL of the JWK set, as NCMP's spring.security.oauth2.resourceserver.jwt.jwk-set-uri (e.g. "
     "Keycloak's .../protocol/openid-connect/certs): fetched at start, every "
     "http.jwt-jwks-refresh-s, and soon after a token names an unknown kid (jwt mode)."},
    {"http.jwt-jwks-refresh-s", NCMP_OPT_INT, "300", NULL, 10, 86400, 0, OFF(http_jwt_jwks_refresh_s),
     "Seconds between fetches of http.jwt-jwks-url."},
    {"http.jwt-hs256-secret", NCMP_OPT_STRING, "", NULL, 0, 0, 1, OFF(http_jwt_hs256_secret),
     "Shared secret of HS256 tokens (jwt mode); empty: HS256 tokens are refused. Never logged or dumped."},
    {"http.jwt-issuer", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(http_jwt_issuer),
     "Required `iss` claim of tokens; empty: any."},
    {"http.jwt-audience", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(http_jwt_audience),
     "Audience that the `aud` claim of tokens must hold; empty: any."},
    {"http.jwt-clock-skew-s", NCMP_OPT_INT, "60", NULL, 0, 3600, 0, OFF(http_jwt_clock_skew_s),
     "Seconds of clock difference allowed when checking `exp` and `nbf` (60 as in Spring Security)."},
    {"rest.db-connections", NCMP_OPT_INT, "8", NULL, 1, 1000, 0, OFF(rest_db_connections),
     "Database connections of the rest role, shared by the server threads; a streamed answer "
     "holds one until its last byte."},
    {"rest.query-timeout-ms", NCMP_OPT_INT, "8000", NULL, 0, 3600000, 0, OFF(rest_query_timeout_ms),
     "Longest a read of the rest and cps roles (searches, inventory, modules, CPS data) may take "
     "from its request's arrival: past it, its query is cancelled (PostgreSQL's "
     "statement_timeout) and it is answered 503 with Retry-After, so that a client under load "
     "hears a refusal instead of waiting for its own timeout; 0: no limit."},
    {"rest.search-index", NCMP_OPT_BOOL, "true", NULL, 0, 0, 0, OFF(rest_search_index),
     "Answer CM-handle searches from an in-memory index of the inventory, brought up to date "
     "with what the database has committed before each search (so a write answered is seen "
     "by every later search). Searches whose CPS path is more than one comparison of a leaf, and "
     "every search until the index is loaded, read PostgreSQL. false: every search reads "
     "PostgreSQL."},
    {"rest.registration-timeout-ms", NCMP_OPT_INT, "30000", NULL, 100, 3600000, 0,
     OFF(rest_registration_timeout_ms),
     "Longest wait for the outcome of a registration sent with POST /ncmpInventory/v1/ch; "
     "after it the answer is 504."},
    {"data.request-topic", NCMP_OPT_STRING, "ncmp-data-operation-requests", NULL, 0, 0, 0,
     OFF(data_request_topic),
     "Topic of legacy batch reads sent as CloudEvents (data = the body of POST /ncmp/v1/data, "
     "ce_destination = the client topic), read by the rest role; empty: not read. Records that "
     "cannot be used go to `<topic>-dlq`."},
    {"data.async-enabled", NCMP_OPT_BOOL, "true", NULL, 0, 0, 0, OFF(data_async_enabled),
     "NCMP's notification.enabled: with false a pass-through `topic` is ignored (the call is "
     "answered synchronously) and POST /ncmp/v1/data answers that asynchronous requests are "
     "unavailable."},

    {"provmns.max-patch-operations", NCMP_OPT_INT, "10", NULL, 1, 100000, 0,
     OFF(provmns_max_patch_operations),
     "NCMP's app.ncmp.provmns.max-patch-operations: a ProvMnS PATCH with more items is refused "
     "with 413."},
    {"datajob.max-body-bytes", NCMP_OPT_INT, "268435456", NULL, 1024, 2000000000, 0,
     OFF(datajob_max_body_bytes),
     "Largest data job (POST /do-not-use/dataJobs/{id}/write) accepted; larger is a 413. The "
     "body is scanned as it arrives, never held whole, whatever this limit."},
    {"datajob.request-topic", NCMP_OPT_STRING, "ncmp-datajob-requests", NULL, 0, 0, 0,
     OFF(datajob_request_topic),
     "Topic of write data jobs sent as CloudEvents (ce_id = the data job id, data = the body of "
     "POST /do-not-use/dataJobs/{id}/write), read by the rest role; empty: not read. Records "
     "that cannot be used go to `<topic>-dlq`."},
    {"datajob.response-topic", NCMP_OPT_STRING, "ncmp-datajob-responses", NULL, 0, 0, 0,
     OFF(datajob_response_topic),
     "Topic of the outcomes of the data jobs of datajob.request-topic, keyed by the data job id."},
    {"policy-executor.enabled", NCMP_OPT_BOOL, "false", NULL, 0, 0, 0, OFF(policy_executor_enabled),
     "NCMP's ncmp.policy-executor.enabled: ask the policy executor before every pass-through "
     "write on passthrough-running and every ProvMnS PUT, PATCH (once per item) and DELETE; "
     "anything but `allow` is a 409."},
    {"policy-executor.url", NCMP_OPT_STRING, "http://policy-executor:8080", NULL, 0, 0, 0,
     OFF(policy_executor_url),
     "Base URL of the policy executor (NCMP's server.address and server.port); ncmpd posts to "
     "<url>/operation-permission/v1/permissions."},
    {"policy-executor.default-decision", NCMP_OPT_STRING, "deny", NULL, 0, 0, 0,
     OFF(policy_executor_default_decision),
     "`allow` or `deny`: the decision when the policy executor cannot be asked (no connection, "
     "a timeout, an HTTP error or an answer that is not a decision)."},
    {"policy-executor.timeout-ms", NCMP_OPT_INT, "30000", NULL, 1, 3600000, 0,
     OFF(policy_executor_timeout_ms),
     "Longest wait for the policy executor's answer (NCMP's readTimeoutInSeconds); then the "
     "default decision applies."},

    {"avc-forward.input-topic", NCMP_OPT_STRING, "dmi-cm-events", NULL, 0, 0, 0, OFF(avc_forward_input_topic),
     "Topic of the CM AVC notifications DMI plugins publish; the avc-forward role forwards each record unchanged."},
    {"avc-forward.output-topic", NCMP_OPT_STRING, "cm-events", NULL, 0, 0, 0, OFF(avc_forward_output_topic),
     "Topic the avc-forward role forwards AVC notifications to (same value, key and headers)."},
    {"avc-forward.workers", NCMP_OPT_INT, "1", NULL, 1, 256, 0, OFF(avc_forward_workers),
     "Consumer threads of the avc-forward role (each with its own producer)."},
    {"avc-forward.batch-size", NCMP_OPT_INT, "10000", NULL, 1, 1000000, 0, OFF(avc_forward_batch_size),
     "Most records the avc-forward role forwards before waiting for the broker's acknowledgements and committing."},
    {"avc-forward.batch-wait-ms", NCMP_OPT_INT, "20", NULL, 0, 60000, 0, OFF(avc_forward_batch_wait_ms),
     "Longest wait to fill an avc-forward batch before forwarding what arrived."},
    {"async-forward.input-topic", NCMP_OPT_STRING, "ncmp-async-m2m", NULL, 0, 0, 0, OFF(async_forward_input_topic),
     "Topic of data-operation results from DMI plugins; the async-forward role republishes each DataOperationEvent to the topic in its ce_destination header."},
    {"async-forward.workers", NCMP_OPT_INT, "1", NULL, 1, 256, 0, OFF(async_forward_workers),
     "Consumer threads of the async-forward role (each with its own producer)."},
    {"async-forward.batch-size", NCMP_OPT_INT, "2000", NULL, 1, 1000000, 0, OFF(async_forward_batch_size),
     "Most records the async-forward role forwards before waiting for the broker's acknowledgements and committing."},
    {"async-forward.batch-wait-ms", NCMP_OPT_INT, "20", NULL, 0, 60000, 0, OFF(async_forward_batch_wait_ms),
     "Longest wait to fill an async-forward batch before forwarding what arrived."},
    {"avc-apply.workers", NCMP_OPT_INT, "2", NULL, 1, 256, 0, OFF(avc_apply_workers),
     "Consumer threads of the avc-apply role, which applies the AVC events of avc-forward.input-topic (ce_source ONAP-DMI-PLUGIN, handles with data sync on) to the operational cache, as a consumer group of its own beside avc-forward. Two: one parses its batch while the other's UPDATE runs."},
    {"avc-apply.batch-size", NCMP_OPT_INT, "1000", NULL, 1, 1000000, 0, OFF(avc_apply_batch_size),
     "Most AVC events the avc-apply role applies in one database transaction."},
    {"avc-apply.batch-wait-ms", NCMP_OPT_INT, "20", NULL, 0, 60000, 0, OFF(avc_apply_batch_wait_ms),
     "Longest wait to fill an avc-apply batch before applying what arrived."},

    {"cps.data-updated-events", NCMP_OPT_BOOL, "true", NULL, 0, 0, 0, OFF(cps_data_updated_events),
     "Announce the writes of subscribed anchors (POST /cps/api/v2/notification-subscription) on "
     "cps.data-updated-topic; false: no write is announced, whatever is subscribed."},
    {"cps.delta-notification", NCMP_OPT_BOOL, "false", NULL, 0, 0, 0, OFF(cps_delta_notification),
     "CPS's app.cps.data-updated.delta-notification: a write of a subscribed anchor sends one data-updated event per entry of the grouped delta of what it changed (with sourceData and targetData) instead of one event."},
    {"cps.data-updated-topic", NCMP_OPT_STRING, "cps-data-updated-events", NULL, 0, 0, 0, OFF(cps_data_updated_topic),
     "Topic of CPS's data-updated events (CloudEvents keyed <dataspace>:<anchor>), published by the cps-relay role."},
    {"cps.relay-batch-size", NCMP_OPT_INT, "5000", NULL, 1, 1000000, 0, OFF(cps_relay_batch_size),
     "Most data-updated events the cps-relay role publishes per round."},
    {"cps.split-parse-bytes", NCMP_OPT_INT, "1048576", NULL, 0, 1073741824, 0, OFF(cps_split_parse_bytes),
     "A JSON write or delta payload of at least this many bytes that is one list (under at most one container, as a bulk of devices) is parsed on two threads, half of its entries each, and joined: a lower latency for one large request (10.7 MB: 75-95 ms instead of 130-160), nothing more for many at once, and the second thread's memory kept by the allocator; 0: every payload on one thread."},
    {"cps.delta-memory-rows", NCMP_OPT_INT, "10000", NULL, 0, 1000000, 0, OFF(cps_delta_memory_rows),
     "A grouped delta bounded in depth (descendants none, direct or N) whose two anchors each have at most this many rows within the depth reads both into memory and compares them there, each row read once; a larger one reads its rows in blocks and asks the database which nodes have children on one side only (memory stays flat). 0: always the latter."},
    {"cps.relay-linger-ms", NCMP_OPT_INT, "20", NULL, 0, 10000, 0, OFF(cps_relay_linger_ms),
     "How long the cps-relay role waits after a write's notification before it publishes, so that one round (one Kafka transaction) carries the events of that time; 0: a round per notification. Adds up to this much to an event's latency."},

    {"data-sync.max-in-flight", NCMP_OPT_INT, "512", NULL, 1, 100000, 0, OFF(data_sync_max_in_flight),
     "Handles whose root nodes the data-sync role reads from their DMI plugins at once, per process (no thread per read)."},
    {"data-sync.workers", NCMP_OPT_INT, "2", NULL, 1, 16, 0, OFF(data_sync_workers),
     "Writer threads of the data-sync role, each with its own database connection (two let one parse the DMI's answers while the other's COPY runs)."},
    {"data-sync.batch-size", NCMP_OPT_INT, "200", NULL, 1, 100000, 0, OFF(data_sync_batch_size),
     "Most handles the data-sync role stores in one transaction."},
    {"data-sync.batch-wait-ms", NCMP_OPT_INT, "20", NULL, 0, 60000, 0, OFF(data_sync_batch_wait_ms),
     "Longest wait to fill a data-sync batch while reads are still in flight."},
    {"data-sync.retry-initial-ms", NCMP_OPT_INT, "5000", NULL, 0, 86400000, 0, OFF(data_sync_retry_initial_ms),
     "Wait before the next attempt after a handle's first failed data-sync read; doubled after each further failure."},
    {"data-sync.retry-max-ms", NCMP_OPT_INT, "600000", NULL, 0, 86400000, 0, OFF(data_sync_retry_max_ms),
     "Longest wait between two data-sync attempts of a handle."},
    {"data-sync.sweep-interval-ms", NCMP_OPT_INT, "30000", NULL, 100, 86400000, 0, OFF(data_sync_sweep_interval_ms),
     "How often the data-sync role queues eligible handles it was not told about (a safety net: handles are queued by a trigger when they become eligible)."},
    {"data-sync.lease-ms", NCMP_OPT_INT, "120000", NULL, 1000, 86400000, 0, OFF(data_sync_lease_ms),
     "How long a handle claimed by a data-sync process is left to it before another may take it (longer than dmi.response-timeout-ms)."},

    {"debug.fault", NCMP_OPT_STRING, "", NULL, 0, 0, 0, OFF(debug_fault),
     "Testing only: `<point>:<n>` kills the process with SIGKILL the n-th time it reaches <point>."},

    {NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL},
};
/* clang-format on */

static const ncmp_option *option_find(const char *name)
{
    for (const ncmp_option *o = ncmp_options; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int choice_ok(const char *choices, const char *value)
{
    return ncmp_list_has(choices, '|', value, strlen(value));
}

static void kafka_prop_set(ncmp_config *cfg, const char *key, const char *value)
{
    for (size_t i = 0; i < cfg->kafka_props_len; i++) {
        if (strcmp(cfg->kafka_props[i].key, key) == 0) {
            free(cfg->kafka_props[i].value);
            cfg->kafka_props[i].value = ncmp_xstrdup(value);
            return;
        }
    }
    cfg->kafka_props =
        ncmp_xrealloc(cfg->kafka_props, (cfg->kafka_props_len + 1) * sizeof(*cfg->kafka_props));
    cfg->kafka_props[cfg->kafka_props_len].key = ncmp_xstrdup(key);
    cfg->kafka_props[cfg->kafka_props_len].value = ncmp_xstrdup(value);
    cfg->kafka_props_len++;
}

static int option_apply(ncmp_config *cfg, const ncmp_option *o, const char *value, ncmp_err *err)
{
    char *field = (char *)cfg + o->offset;

    if (o->offset == (size_t)-1)
        return 0; /* handled by the loader itself */

    switch (o->type) {
    case NCMP_OPT_STRING:
        if (o->choices && !choice_ok(o->choices, value))
            return ncmp_err_set(err, NCMP_ERR_FATAL, "option %s: '%s' is not one of %s", o->name,
                                value, o->choices);
        free(*(char **)field);
        *(char **)field = ncmp_xstrdup(value);
        return 0;
    case NCMP_OPT_INT: {
        char *end = NULL;
        long v;
        errno = 0;
        v = strtol(value, &end, 10);
        if (errno || !*value || *end)
            return ncmp_err_set(err, NCMP_ERR_FATAL, "option %s: '%s' is not an integer", o->name,
                                value);
        if (v < o->min || v > o->max)
            return ncmp_err_set(err, NCMP_ERR_FATAL, "option %s: %ld is out of range [%ld, %ld]",
                                o->name, v, o->min, o->max);
        *(int *)field = (int)v;
        return 0;
    }
    case NCMP_OPT_BOOL: {
        int b;
        if (parse_bool(value, &b) != 0)
            return ncmp_err_set(err, NCMP_ERR_FATAL,
                                "option %s: '%s' is not a boolean (true/false)", o->name, value);
        *(int *)field = b;
        return 0;
    }
    }
    return ncmp_err_set(err, NCMP_ERR_FATAL, "option %s: bad type", o->name);
}

int ncmp_config_set(ncmp_config *cfg, const char *name, const char *value, ncmp_err *err)
{
    const ncmp_option *o = option_find(name);

    if (o)
        return option_apply(cfg, o, value, err);
    if (strncmp(name, "kafka.", 6) == 0 && name[6]) {
        kafka_prop_set(cfg, name + 6, value);
        return 0;
    }
    return ncmp_err_set(err, NCMP_ERR_FATAL, "unknown option '%s' (see --help)", name);
}

ncmp_config *ncmp_config_new_defaults(void)
{
    ncmp_config *cfg = ncmp_xcalloc(1, sizeof(*cfg));
    ncmp_err err;

    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        if (option_apply(cfg, o, o->def, &err) != 0) {
            /* A bad default is a programming error caught by the tests. */
            fprintf(stderr, "ncmpd: bad default: %s\n", err.msg);
            abort();
        }
    }
    return cfg;
}

void ncmp_config_destroy(ncmp_config *cfg)
{
    if (!cfg)
        return;
    for (const ncmp_option *o = ncmp_options; o->name; o++)
        if (o->type == NCMP_OPT_STRING && o->offset != (size_t)-1)
            free(*(char **)((char *)cfg + o->offset));
    for (size_t i = 0; i < cfg->kafka_props_len; i++) {
        free(cfg->kafka_props[i].key);
        free(cfg->kafka_props[i].value);
    }
    free(cfg->kafka_props);
    free(cfg);
}

void ncmp_config_env_name(const char *name, char *out, size_t outlen)
{
    size_t n = 0;
    const char *prefix = "NCMP_";

    for (const char *p = prefix; *p && n + 1 < outlen; p++)
        out[n++] = *p;
    for (const char *p = name; *p && n + 1 < outlen; p++)
        out[n++] = (*p == '.' || *p == '-') ? '_' : (char)toupper((unsigned char)*p);
    out[n] = '\0';
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int load_file(ncmp_config *cfg, const char *path, ncmp_err *err)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int lineno = 0;
    int rc = 0;

    if (!f)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot read config file %s: %s", path,
                            strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        char *s, *eq, *key, *value;
        lineno++;
        s = trim(line);
        if (!*s || *s == '#')
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            rc = ncmp_err_set(err, NCMP_ERR_FATAL, "%s:%d: expected `key = value`", path, lineno);
            break;
        }
        *eq = '\0';
        key = trim(s);
        value = trim(eq + 1);
        if (ncmp_config_set(cfg, key, value, err) != 0) {
            rc = ncmp_err_prefix(err, "%s:%d", path, lineno);
            break;
        }
    }
    fclose(f);
    return rc;
}

static int load_env(ncmp_config *cfg, char **envp, ncmp_err *err)
{
    char env[256];

    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        const char *v;
        ncmp_config_env_name(o->name, env, sizeof(env));
        v = ncmp_env_get(envp, env);
        if (v && option_apply(cfg, o, v, err) != 0)
            return ncmp_err_prefix(err, "environment %s", env);
    }
    /* NCMP_KAFKA_X_Y that is no option of ours: librdkafka's x.y */
    for (char **e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        char key[256];
        size_t n;
        int known = 0;

        if (strncmp(*e, "NCMP_KAFKA_", 11) != 0 || !eq)
            continue;
        for (const ncmp_option *o = ncmp_options; o->name && !known; o++) {
            ncmp_config_env_name(o->name, env, sizeof(env));
            known = strncmp(*e, env, (size_t)(eq - *e)) == 0 && env[eq - *e] == '\0';
        }
        if (known)
            continue;
        n = 0;
        for (const char *p = *e + 11; p < eq && n + 1 < sizeof(key); p++)
            key[n++] = *p == '_' ? '.' : (char)tolower((unsigned char)*p);
        key[n] = '\0';
        if (n)
            kafka_prop_set(cfg, key, eq + 1);
    }
    return 0;
}

/* First pass over argv: find --config before anything else is applied. */
static const char *find_config_flag(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strncmp(argv[i], "--config=", 9) == 0)
            return argv[i] + 9;
        if ((strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

/* A flag may write the dot of an option's section as a dash, as in
 * --log-format=json for log.format: rewrite `name` to the option it
 * means, if exactly one does. */
static void flag_spelling(char *name)
{
    char try[256], found[256] = "";
    int matches = 0;

    if (option_find(name))
        return;
    for (char *p = name; *p; p++) {
        if (*p != '-')
            continue;
        snprintf(try, sizeof(try), "%s", name);
        try[p - name] = '.';
        if (option_find(try)) {
            snprintf(found, sizeof(found), "%s", try);
            matches++;
        }
    }
    if (matches == 1)
        strcpy(name, found);
}

static int load_flags(ncmp_config *cfg, int argc, char **argv, ncmp_cli *cli, ncmp_err *err)
{
    int positional_only = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq;
        const ncmp_option *o;
        char name[256];
        const char *value;

        if (!positional_only && strcmp(a, "--") == 0) {
            positional_only = 1;
            continue;
        }
        if (positional_only || a[0] != '-') {
            if (!cli)
                return ncmp_err_set(err, NCMP_ERR_FATAL, "unexpected argument '%s'", a);
            if (!cli->command) {
                cli->command = a;
                cli->args = argv + i + 1;
                cli->nargs = 0;
            } else {
                if (cli->nargs == 0)
                    cli->args = argv + i; /* options may stand between */
                cli->nargs++;
            }
            continue;
        }
        if (cli && cli->command && cli->nargs > 0) {
            /* options after command arguments are fine, but the argument
             * list must stay contiguous */
            return ncmp_err_set(err, NCMP_ERR_FATAL,
                                "put options before the arguments of '%s' (at '%s')", cli->command,
                                a);
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (cli)
                cli->help = 1;
            continue;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            if (cli)
                cli->version = 1;
            continue;
        }
        if (strcmp(a, "--dump-config") == 0) {
            if (cli)
                cli->dump_config = 1;
            continue;
        }
        if (strcmp(a, "-c") == 0) {
            if (i + 1 >= argc)
                return ncmp_err_set(err, NCMP_ERR_FATAL, "flag -c needs a value");
            i++; /* already read by find_config_flag */
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return ncmp_err_set(err, NCMP_ERR_FATAL, "unknown flag '%s' (see --help)", a);
        a += 2;
        eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
            flag_spelling(name);
            value = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
            flag_spelling(name);
            o = option_find(name);
            if (o && o->type == NCMP_OPT_BOOL) {
                value = "true";
            } else if (i + 1 < argc) {
                value = argv[++i];
            } else {
                return ncmp_err_set(err, NCMP_ERR_FATAL, "flag --%s needs a value", name);
            }
        }
        if (ncmp_config_set(cfg, name, value, err) != 0)
            return -1;
    }
    return 0;
}

int ncmp_config_load(ncmp_config **out, int argc, char **argv, char **envp, ncmp_cli *cli,
                     ncmp_err *err)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    const char *file;

    if (cli)
        memset(cli, 0, sizeof(*cli));
    file = find_config_flag(argc, argv);
    if (!file)
        file = ncmp_env_get(envp, "NCMP_CONFIG");
    if (file && *file && load_file(cfg, file, err) != 0)
        goto fail;
    if (load_env(cfg, envp, err) != 0)
        goto fail;
    if (load_flags(cfg, argc, argv, cli, err) != 0)
        goto fail;
    *out = cfg;
    return 0;
fail:
    ncmp_config_destroy(cfg);
    return -1;
}

int ncmp_config_key_is_secret(const char *key)
{
    return strstr(key, "password") || strstr(key, "secret") || strstr(key, "sasl.oauthbearer") ||
           strstr(key, "ssl.key.pem") || strstr(key, "ssl_key");
}

static void value_text(const ncmp_config *cfg, const ncmp_option *o, char *out, size_t outlen)
{
    const char *field = (const char *)cfg + o->offset;

    switch (o->type) {
    case NCMP_OPT_STRING:
        snprintf(out, outlen, "%s", *(char *const *)field ? *(char *const *)field : "");
        break;
    case NCMP_OPT_INT:
        snprintf(out, outlen, "%d", *(const int *)field);
        break;
    case NCMP_OPT_BOOL:
        snprintf(out, outlen, "%s", *(const int *)field ? "true" : "false");
        break;
    }
}

void ncmp_config_dump(const ncmp_config *cfg, FILE *out)
{
    char v[4096];

    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        if (o->offset == (size_t)-1)
            continue;
        value_text(cfg, o, v, sizeof(v));
        fprintf(out, "%s = %s\n", o->name, o->secret && *v ? "********" : v);
    }
    for (size_t i = 0; i < cfg->kafka_props_len; i++)
        fprintf(out, "kafka.%s = %s\n", cfg->kafka_props[i].key,
                ncmp_config_key_is_secret(cfg->kafka_props[i].key) ? "********"
                                                                   : cfg->kafka_props[i].value);
}

static const char *type_name(const ncmp_option *o)
{
    if (o->choices)
        return o->choices;
    switch (o->type) {
    case NCMP_OPT_STRING:
        return "string";
    case NCMP_OPT_INT:
        return "integer";
    case NCMP_OPT_BOOL:
        return "true|false";
    }
    return "?";
}

void ncmp_config_help(FILE *out)
{
    char env[256];

    fprintf(out, "Options (defaults < --config file < NCMP_* environment < flags):\n");
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        ncmp_config_env_name(o->name, env, sizeof(env));
        fprintf(out, "  --%s=<%s>\n      %s\n      default: %s; env %s\n", o->name, type_name(o),
                o->help, *o->def ? o->def : "(empty)", env);
        if (o->type == NCMP_OPT_INT)
            fprintf(out, "      range: %ld..%ld\n", o->min, o->max);
    }
    fprintf(out, "  --kafka.<property>=<value>\n"
                 "      Any librdkafka property, passed through (env NCMP_KAFKA_<PROPERTY>,\n"
                 "      underscores standing for dots).\n");
}

void ncmp_config_doc_markdown(FILE *out)
{
    char env[256];

    fprintf(out,
            "# Configuration\n\n"
            "<!-- Generated by `ncmpd config-doc` from the option table in "
            "lib/ncmp_config.c; a test fails when this file differs. -->\n\n"
            "Every setting can come from four places; a later one wins:\n\n"
            "1. the built-in default,\n"
            "2. the configuration file named by `--config FILE` (or `NCMP_CONFIG`), one\n"
            "   `key = value` per line, `#` starts a comment,\n"
            "3. the environment: `NCMP_` + the key in upper case with `.` and `-` as `_`,\n"
            "4. command-line flags: `--key=value` or `--key value`; the dot after a key's\n"
            "   section may be written as a dash (`--log-format=json` is `--log.format=json`).\n\n"
            "`ncmpd --dump-config` prints the effective settings with secrets redacted.\n\n"
            "Keys under `kafka.` that are not listed below are passed to librdkafka as they\n"
            "are (see librdkafka's CONFIGURATION.md), e.g. `kafka.security.protocol = SSL`\n"
            "or `NCMP_KAFKA_SECURITY_PROTOCOL=SSL` (in the environment, underscores after\n"
            "`NCMP_KAFKA_` stand for dots). Keys naming a password or secret are redacted\n"
            "in dumps.\n\n"
            "| key | environment | type | default | description |\n"
            "|---|---|---|---|---|\n");
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        ncmp_config_env_name(o->name, env, sizeof(env));
        fprintf(out, "| `%s` | `%s` | ", o->name, env);
        if (o->type == NCMP_OPT_INT)
            fprintf(out, "integer %ld..%ld", o->min, o->max);
        else if (o->choices) {
            for (const char *p = o->choices; *p; p++) {
                if (*p == '|')
                    fputs(", ", out);
                else
                    fputc(*p, out);
            }
        } else if (o->type == NCMP_OPT_BOOL)
            fputs("true, false", out); /* a bare | would split the cell */
        else
            fputs(type_name(o), out);
        fprintf(out, " | %s%s%s | %s%s |\n", *o->def ? "`" : "", *o->def ? o->def : "(empty)",
                *o->def ? "`" : "", o->help, o->secret ? " Secret." : "");
    }
}
