-- Telemetry warehouse, schema v14 (pg_dump --schema-only, trimmed)
SET statement_timeout = 0;

CREATE TABLE telemetry.sensor_readings (
    series_id      varchar(64)      NOT NULL,
    reading_ts     timestamptz(3)   NOT NULL,
    revision       integer          NOT NULL DEFAULT 0,
    value          NUMERIC(18,6),
    quality        text             NOT NULL CHECK (quality IN ('good', 'suspect', 'bad')),
    "Unit Code"    character varying(16),
    ingested_at    timestamp without time zone DEFAULT now(),
    payload        jsonb,
    CONSTRAINT sensor_readings_pkey PRIMARY KEY (series_id, reading_ts, revision),
    CONSTRAINT value_range CHECK (value BETWEEN -1000 AND 100000),
    CONSTRAINT bad_has_no_value CHECK (quality <> 'bad' OR value IS NULL),
    CONSTRAINT series_fk FOREIGN KEY (series_id) REFERENCES telemetry.series (series_id)
);

COMMENT ON TABLE telemetry.sensor_readings IS 'Calibrated readings, one row per series, instant and revision.';
COMMENT ON COLUMN telemetry.sensor_readings.value IS 'Calibrated value in the series unit';

CREATE INDEX sensor_readings_ts_idx ON telemetry.sensor_readings USING brin (reading_ts);
