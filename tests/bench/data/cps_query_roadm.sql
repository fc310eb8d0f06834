-- CPS's QueryPerfTest data in the fragment table, for measuring CPS-path
-- queries (docs/cps.md, "CPS path"): 3 anchors openroadm1..3, each with
-- /openroadm-devices and 1000 openroadm-device entries of 86 nodes (the
-- shape of tests/data/openroadm/device.json: 28 degrees, each with one
-- circuit-packs and one connection-ports entry), 86,001 rows per anchor.
-- Run on a migrated database:
--     psql "$URL" -f tests/bench/data/cps_query_roadm.sql
-- then EXPLAIN ANALYZE what cps_query_to_sql makes of a path, with the
-- anchors' ids as its first parameter.
INSERT INTO dataspace (name) VALUES ('perf') ON CONFLICT DO NOTHING;
INSERT INTO schema_set (dataspace_id, name) SELECT id, 'roadm' FROM dataspace WHERE name = 'perf' ON CONFLICT DO NOTHING;
INSERT INTO anchor (dataspace_id, schema_set_id, name)
SELECT d.id, s.id, 'openroadm' || a FROM dataspace d JOIN schema_set s ON s.dataspace_id = d.id, generate_series(1, 3) a WHERE d.name = 'perf';
CREATE TEMP TABLE dev AS
SELECT an.id AS anchor_id, i,
       E'\x01openroadm-devices\x01openroadm-device[@device-id=''C201-7-1A-' || i || ''']' AS p
FROM anchor an, generate_series(1, 1000) i WHERE an.name LIKE 'openroadm%'
  AND an.dataspace_id = (SELECT id FROM dataspace WHERE name = 'perf');
INSERT INTO fragment (anchor_id, path, depth, name, attributes)
SELECT id, E'\x01openroadm-devices', 1, 'openroadm-devices', '{}' FROM anchor
WHERE name LIKE 'openroadm%' AND dataspace_id = (SELECT id FROM dataspace WHERE name = 'perf')
UNION ALL
SELECT anchor_id, p, 2, 'openroadm-device',
       jsonb_build_object('device-id', 'C201-7-1A-' || i, 'ne-state', 'inservice',
                          'commission-date-time', '2022-11-06T14:12:23.260487-06:00', 'status', 'success')
FROM dev
UNION ALL
SELECT anchor_id, p || E'\x01org-openroadm-device', 3, 'org-openroadm-device', '{}' FROM dev
UNION ALL
SELECT anchor_id, p || E'\x01org-openroadm-device\x01degree[@degree-number=''' || d || ''']', 4, 'degree',
       jsonb_build_object('degree-number', d, 'max-wavelengths', 128)
FROM dev, generate_series(1, 28) d
UNION ALL
SELECT anchor_id, p || E'\x01org-openroadm-device\x01degree[@degree-number=''' || d || E''']\x01' || c || '[@index=''1'']', 5, c,
       '{"index": 1}'
FROM dev, generate_series(1, 28) d, unnest(ARRAY['circuit-packs', 'connection-ports']) c;
ANALYZE fragment;
