-- CPS's data-updated events (workers/cps/cps_events.c).
--
-- An event is written here in the transaction of the write it announces,
-- and published to cps.data-updated-topic by the cps-relay role
-- (lib/ncmp_relay.h): exactly once, in commit order per anchor (every
-- writer of an anchor holds its row's lock until it commits). The key is
-- CPS's record key, <dataspace>:<anchor>; event_type is the action.
CREATE TABLE cps_event_outbox (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_key   text        NOT NULL,
    event_id    text        NOT NULL,
    event_time  text        NOT NULL,
    event_type  text        NOT NULL,
    payload     text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Notification subscriptions are data of the store, where CPS keeps them:
-- dataspace CPS-Admin, anchor cps-notification-subscriptions, on the
-- module cps-notification-subscriptions, with the root node /dataspaces.
-- /v2/notification-subscription writes and reads that anchor, and a write
-- of a subscribed anchor (or of any anchor of a subscribed dataspace
-- that names no anchors) writes its event to the outbox above.
INSERT INTO yang_resource (checksum, module_name, revision, namespace, source)
SELECT encode(sha256(convert_to(src, 'UTF8')), 'hex'), 'cps-notification-subscriptions',
       '2024-08-05', 'org:onap:cps', src
FROM (VALUES ($yang$module cps-notification-subscriptions {
    yang-version 1.1;
    namespace "org:onap:cps";
    prefix cps-notification-subscriptions;

    description
        "Which dataspaces and anchors of the CPS store announce their
         changes on the data-updated topic.";

    revision "2024-08-05" {
        description
            "CPS's notification subscription model.";
    }

    container dataspaces {
        list dataspace {
            key "name";
            leaf name {
                type string;
            }
            container anchors {
                list anchor {
                    key "name";
                    leaf name {
                        type string;
                    }
                    container xpaths {
                        list xpath {
                            key "path";
                            leaf path {
                                type string;
                            }
                        }
                    }
                }
            }
            leaf-list subscriptionIds {
                type string;
            }
            leaf topic {
                type string;
            }
        }
    }
}
$yang$)) AS y(src)
ON CONFLICT (checksum) DO NOTHING;

WITH d AS (
    INSERT INTO dataspace (name) VALUES ('CPS-Admin')
    ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id
), s AS (
    INSERT INTO schema_set (dataspace_id, name)
    SELECT id, 'cps-notification-subscriptions' FROM d RETURNING id, dataspace_id
), m AS (
    INSERT INTO schema_set_member (schema_set_id, checksum, module_name, revision)
    SELECT s.id, r.checksum, r.module_name, r.revision FROM s, yang_resource r
    WHERE r.module_name = 'cps-notification-subscriptions' AND r.revision = '2024-08-05'
), a AS (
    INSERT INTO anchor (dataspace_id, schema_set_id, name)
    SELECT dataspace_id, id, 'cps-notification-subscriptions' FROM s RETURNING id
)
INSERT INTO fragment (anchor_id, path, depth, name, attributes)
SELECT id, E'\x01dataspaces', 1, 'dataspaces', '{}' FROM a;
