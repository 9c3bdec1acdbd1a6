create or replace table RAW.METER_READINGS (
    METER_ID varchar(32) not null,
    READ_AT timestamp_tz(3) not null,
    KWH number(12,3),
    FLAGS variant,
    constraint PK_METER primary key (METER_ID, READ_AT)
) cluster by (READ_AT) comment = 'AMI interval reads';
