CREATE TABLE IF NOT EXISTS `fx_ticks` (
  `pair` char(7) NOT NULL COMMENT 'ISO pair',
  `ts` timestamp(6) NOT NULL,
  `bid` decimal(18,6) NOT NULL,
  `ask` decimal(18,6) NOT NULL,
  `id` bigint unsigned NOT NULL AUTO_INCREMENT,
  PRIMARY KEY (`pair`, `ts`),
  KEY `ts_idx` (`ts`),
  CONSTRAINT `spread_ok` CHECK (`ask` >= `bid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='Raw FX ticks'
PARTITION BY RANGE (UNIX_TIMESTAMP(ts)) (PARTITION p2026 VALUES LESS THAN (1798761600));
