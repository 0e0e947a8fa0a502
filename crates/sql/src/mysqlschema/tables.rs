//! MariaDB 10.11.14's definitions of the `mysql` tables onelog serves, as `SHOW CREATE TABLE`
//! and `SHOW FULL COLUMNS` print them (measured on `mariadb-install-db` of 10.11.14; kept
//! verbatim, so that both statements answer exactly as MariaDB). Data only: the rows are
//! computed in `mysqlschema`.

use super::{Spec, SpecCol};

pub(super) const COLUMNS_PRIV: Spec = Spec {
    name: "columns_priv",
    view: false,
    create: "CREATE TABLE `columns_priv` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `Db` char(64) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Table_name` char(64) NOT NULL DEFAULT '',\n  `Column_name` char(64) NOT NULL DEFAULT '',\n  `Timestamp` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  `Column_priv` set('Select','Insert','Update','References') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT '',\n  PRIMARY KEY (`Host`,`Db`,`User`,`Table_name`,`Column_name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Column privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Table_name", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Column_name", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Timestamp", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
        SpecCol { field: "Column_priv", ty: "set('Select','Insert','Update','References')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
    ],
};

pub(super) const DB: Spec = Spec {
    name: "db",
    view: false,
    create: "CREATE TABLE `db` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `Db` char(64) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Select_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Insert_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Update_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Delete_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Create_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Drop_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Grant_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `References_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Index_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Alter_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Create_tmp_table_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Lock_tables_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Create_view_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Show_view_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Create_routine_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Alter_routine_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Execute_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Event_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Trigger_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  `Delete_history_priv` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  PRIMARY KEY (`Host`,`Db`,`User`),\n  KEY `User` (`User`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Database privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Select_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Insert_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Update_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Delete_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Create_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Drop_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Grant_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "References_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Index_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Alter_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Create_tmp_table_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Lock_tables_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Create_view_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Show_view_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Create_routine_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Alter_routine_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Execute_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Event_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Trigger_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
        SpecCol { field: "Delete_history_priv", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
    ],
};

pub(super) const EVENT: Spec = Spec {
    name: "event",
    view: false,
    create: "CREATE TABLE `event` (\n  `db` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL DEFAULT '',\n  `name` char(64) NOT NULL DEFAULT '',\n  `body` longblob NOT NULL,\n  `definer` varchar(384) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL DEFAULT '',\n  `execute_at` datetime DEFAULT NULL,\n  `interval_value` int(11) DEFAULT NULL,\n  `interval_field` enum('YEAR','QUARTER','MONTH','DAY','HOUR','MINUTE','WEEK','SECOND','MICROSECOND','YEAR_MONTH','DAY_HOUR','DAY_MINUTE','DAY_SECOND','HOUR_MINUTE','HOUR_SECOND','MINUTE_SECOND','DAY_MICROSECOND','HOUR_MICROSECOND','MINUTE_MICROSECOND','SECOND_MICROSECOND') DEFAULT NULL,\n  `created` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  `modified` timestamp NOT NULL DEFAULT '0000-00-00 00:00:00',\n  `last_executed` datetime DEFAULT NULL,\n  `starts` datetime DEFAULT NULL,\n  `ends` datetime DEFAULT NULL,\n  `status` enum('ENABLED','DISABLED','SLAVESIDE_DISABLED') NOT NULL DEFAULT 'ENABLED',\n  `on_completion` enum('DROP','PRESERVE') NOT NULL DEFAULT 'DROP',\n  `sql_mode` set('REAL_AS_FLOAT','PIPES_AS_CONCAT','ANSI_QUOTES','IGNORE_SPACE','IGNORE_BAD_TABLE_OPTIONS','ONLY_FULL_GROUP_BY','NO_UNSIGNED_SUBTRACTION','NO_DIR_IN_CREATE','POSTGRESQL','ORACLE','MSSQL','DB2','MAXDB','NO_KEY_OPTIONS','NO_TABLE_OPTIONS','NO_FIELD_OPTIONS','MYSQL323','MYSQL40','ANSI','NO_AUTO_VALUE_ON_ZERO','NO_BACKSLASH_ESCAPES','STRICT_TRANS_TABLES','STRICT_ALL_TABLES','NO_ZERO_IN_DATE','NO_ZERO_DATE','INVALID_DATES','ERROR_FOR_DIVISION_BY_ZERO','TRADITIONAL','NO_AUTO_CREATE_USER','HIGH_NOT_PRECEDENCE','NO_ENGINE_SUBSTITUTION','PAD_CHAR_TO_FULL_LENGTH','EMPTY_STRING_IS_NULL','SIMULTANEOUS_ASSIGNMENT','TIME_ROUND_FRACTIONAL') NOT NULL DEFAULT '',\n  `comment` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL DEFAULT '',\n  `originator` int(10) unsigned NOT NULL,\n  `time_zone` char(64) CHARACTER SET latin1 COLLATE latin1_swedish_ci NOT NULL DEFAULT 'SYSTEM',\n  `character_set_client` char(32) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `collation_connection` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `db_collation` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `body_utf8` longblob DEFAULT NULL,\n  PRIMARY KEY (`db`,`name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Events'",
    columns: &[
        SpecCol { field: "db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "name", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "body", ty: "longblob", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "definer", ty: "varchar(384)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "execute_at", ty: "datetime", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "interval_value", ty: "int(11)", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "interval_field", ty: "enum('YEAR','QUARTER','MONTH','DAY','HOUR','MINUTE','WEEK','SECOND','MICROSECOND','YEAR_MONTH','DAY_HOUR','DAY_MINUTE','DAY_SECOND','HOUR_MINUTE','HOUR_SECOND','MINUTE_SECOND','DAY_MICROSECOND','HOUR_MICROSECOND','MINUTE_MICROSECOND','SECOND_MICROSECOND')", collation: Some("utf8mb3_general_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "created", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
        SpecCol { field: "modified", ty: "timestamp", collation: None, null: false, key: "", default: Some("0000-00-00 00:00:00"), extra: "" },
        SpecCol { field: "last_executed", ty: "datetime", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "starts", ty: "datetime", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "ends", ty: "datetime", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "status", ty: "enum('ENABLED','DISABLED','SLAVESIDE_DISABLED')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("ENABLED"), extra: "" },
        SpecCol { field: "on_completion", ty: "enum('DROP','PRESERVE')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("DROP"), extra: "" },
        SpecCol { field: "sql_mode", ty: "set('REAL_AS_FLOAT','PIPES_AS_CONCAT','ANSI_QUOTES','IGNORE_SPACE','IGNORE_BAD_TABLE_OPTIONS','ONLY_FULL_GROUP_BY','NO_UNSIGNED_SUBTRACTION','NO_DIR_IN_CREATE','POSTGRESQL','ORACLE','MSSQL','DB2','MAXDB','NO_KEY_OPTIONS','NO_TABLE_OPTIONS','NO_FIELD_OPTIONS','MYSQL323','MYSQL40','ANSI','NO_AUTO_VALUE_ON_ZERO','NO_BACKSLASH_ESCAPES','STRICT_TRANS_TABLES','STRICT_ALL_TABLES','NO_ZERO_IN_DATE','NO_ZERO_DATE','INVALID_DATES','ERROR_FOR_DIVISION_BY_ZERO','TRADITIONAL','NO_AUTO_CREATE_USER','HIGH_NOT_PRECEDENCE','NO_ENGINE_SUBSTITUTION','PAD_CHAR_TO_FULL_LENGTH','EMPTY_STRING_IS_NULL','SIMULTANEOUS_ASSIGNMENT','TIME_ROUND_FRACTIONAL')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "comment", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "originator", ty: "int(10) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "time_zone", ty: "char(64)", collation: Some("latin1_swedish_ci"), null: false, key: "", default: Some("SYSTEM"), extra: "" },
        SpecCol { field: "character_set_client", ty: "char(32)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "collation_connection", ty: "char(64)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "db_collation", ty: "char(64)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "body_utf8", ty: "longblob", collation: None, null: true, key: "", default: None, extra: "" },
    ],
};

pub(super) const FUNC: Spec = Spec {
    name: "func",
    view: false,
    create: "CREATE TABLE `func` (\n  `name` char(64) NOT NULL DEFAULT '',\n  `ret` tinyint(1) NOT NULL DEFAULT 0,\n  `dl` char(128) NOT NULL DEFAULT '',\n  `type` enum('function','aggregate') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL,\n  PRIMARY KEY (`name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='User defined functions'",
    columns: &[
        SpecCol { field: "name", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "ret", ty: "tinyint(1)", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "dl", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "type", ty: "enum('function','aggregate')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
    ],
};

pub(super) const GLOBAL_PRIV: Spec = Spec {
    name: "global_priv",
    view: false,
    create: "CREATE TABLE `global_priv` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Priv` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '{}' CHECK (json_valid(`Priv`)),\n  PRIMARY KEY (`Host`,`User`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Users and global privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Priv", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some("'{}'"), extra: "" },
    ],
};

pub(super) const GTID_SLAVE_POS: Spec = Spec {
    name: "gtid_slave_pos",
    view: false,
    create: "CREATE TABLE `gtid_slave_pos` (\n  `domain_id` int(10) unsigned NOT NULL,\n  `sub_id` bigint(20) unsigned NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `seq_no` bigint(20) unsigned NOT NULL,\n  PRIMARY KEY (`domain_id`,`sub_id`)\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci COMMENT='Replication slave GTID position'",
    columns: &[
        SpecCol { field: "domain_id", ty: "int(10) unsigned", collation: None, null: false, key: "PRI", default: None, extra: "" },
        SpecCol { field: "sub_id", ty: "bigint(20) unsigned", collation: None, null: false, key: "PRI", default: None, extra: "" },
        SpecCol { field: "server_id", ty: "int(10) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "seq_no", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
    ],
};

pub(super) const PLUGIN: Spec = Spec {
    name: "plugin",
    view: false,
    create: "CREATE TABLE `plugin` (\n  `name` varchar(64) NOT NULL DEFAULT '',\n  `dl` varchar(128) NOT NULL DEFAULT '',\n  PRIMARY KEY (`name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='MySQL plugins'",
    columns: &[
        SpecCol { field: "name", ty: "varchar(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "dl", ty: "varchar(128)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
    ],
};

pub(super) const PROC: Spec = Spec {
    name: "proc",
    view: false,
    create: "CREATE TABLE `proc` (\n  `db` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL DEFAULT '',\n  `name` char(64) NOT NULL DEFAULT '',\n  `type` enum('FUNCTION','PROCEDURE','PACKAGE','PACKAGE BODY') NOT NULL,\n  `specific_name` char(64) NOT NULL DEFAULT '',\n  `language` enum('SQL') NOT NULL DEFAULT 'SQL',\n  `sql_data_access` enum('CONTAINS_SQL','NO_SQL','READS_SQL_DATA','MODIFIES_SQL_DATA') NOT NULL DEFAULT 'CONTAINS_SQL',\n  `is_deterministic` enum('YES','NO') NOT NULL DEFAULT 'NO',\n  `security_type` enum('INVOKER','DEFINER') NOT NULL DEFAULT 'DEFINER',\n  `param_list` blob NOT NULL,\n  `returns` longblob NOT NULL,\n  `body` longblob NOT NULL,\n  `definer` varchar(384) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL DEFAULT '',\n  `created` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  `modified` timestamp NOT NULL DEFAULT '0000-00-00 00:00:00',\n  `sql_mode` set('REAL_AS_FLOAT','PIPES_AS_CONCAT','ANSI_QUOTES','IGNORE_SPACE','IGNORE_BAD_TABLE_OPTIONS','ONLY_FULL_GROUP_BY','NO_UNSIGNED_SUBTRACTION','NO_DIR_IN_CREATE','POSTGRESQL','ORACLE','MSSQL','DB2','MAXDB','NO_KEY_OPTIONS','NO_TABLE_OPTIONS','NO_FIELD_OPTIONS','MYSQL323','MYSQL40','ANSI','NO_AUTO_VALUE_ON_ZERO','NO_BACKSLASH_ESCAPES','STRICT_TRANS_TABLES','STRICT_ALL_TABLES','NO_ZERO_IN_DATE','NO_ZERO_DATE','INVALID_DATES','ERROR_FOR_DIVISION_BY_ZERO','TRADITIONAL','NO_AUTO_CREATE_USER','HIGH_NOT_PRECEDENCE','NO_ENGINE_SUBSTITUTION','PAD_CHAR_TO_FULL_LENGTH','EMPTY_STRING_IS_NULL','SIMULTANEOUS_ASSIGNMENT','TIME_ROUND_FRACTIONAL') NOT NULL DEFAULT '',\n  `comment` text CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL,\n  `character_set_client` char(32) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `collation_connection` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `db_collation` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL,\n  `body_utf8` longblob DEFAULT NULL,\n  `aggregate` enum('NONE','GROUP') NOT NULL DEFAULT 'NONE',\n  PRIMARY KEY (`db`,`name`,`type`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Stored Procedures'",
    columns: &[
        SpecCol { field: "db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "name", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "type", ty: "enum('FUNCTION','PROCEDURE','PACKAGE','PACKAGE BODY')", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: None, extra: "" },
        SpecCol { field: "specific_name", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "language", ty: "enum('SQL')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("SQL"), extra: "" },
        SpecCol { field: "sql_data_access", ty: "enum('CONTAINS_SQL','NO_SQL','READS_SQL_DATA','MODIFIES_SQL_DATA')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("CONTAINS_SQL"), extra: "" },
        SpecCol { field: "is_deterministic", ty: "enum('YES','NO')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("NO"), extra: "" },
        SpecCol { field: "security_type", ty: "enum('INVOKER','DEFINER')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("DEFINER"), extra: "" },
        SpecCol { field: "param_list", ty: "blob", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "returns", ty: "longblob", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "body", ty: "longblob", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "definer", ty: "varchar(384)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "created", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
        SpecCol { field: "modified", ty: "timestamp", collation: None, null: false, key: "", default: Some("0000-00-00 00:00:00"), extra: "" },
        SpecCol { field: "sql_mode", ty: "set('REAL_AS_FLOAT','PIPES_AS_CONCAT','ANSI_QUOTES','IGNORE_SPACE','IGNORE_BAD_TABLE_OPTIONS','ONLY_FULL_GROUP_BY','NO_UNSIGNED_SUBTRACTION','NO_DIR_IN_CREATE','POSTGRESQL','ORACLE','MSSQL','DB2','MAXDB','NO_KEY_OPTIONS','NO_TABLE_OPTIONS','NO_FIELD_OPTIONS','MYSQL323','MYSQL40','ANSI','NO_AUTO_VALUE_ON_ZERO','NO_BACKSLASH_ESCAPES','STRICT_TRANS_TABLES','STRICT_ALL_TABLES','NO_ZERO_IN_DATE','NO_ZERO_DATE','INVALID_DATES','ERROR_FOR_DIVISION_BY_ZERO','TRADITIONAL','NO_AUTO_CREATE_USER','HIGH_NOT_PRECEDENCE','NO_ENGINE_SUBSTITUTION','PAD_CHAR_TO_FULL_LENGTH','EMPTY_STRING_IS_NULL','SIMULTANEOUS_ASSIGNMENT','TIME_ROUND_FRACTIONAL')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "comment", ty: "text", collation: Some("utf8mb3_bin"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "character_set_client", ty: "char(32)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "collation_connection", ty: "char(64)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "db_collation", ty: "char(64)", collation: Some("utf8mb3_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "body_utf8", ty: "longblob", collation: None, null: true, key: "", default: None, extra: "" },
        SpecCol { field: "aggregate", ty: "enum('NONE','GROUP')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("NONE"), extra: "" },
    ],
};

pub(super) const PROCS_PRIV: Spec = Spec {
    name: "procs_priv",
    view: false,
    create: "CREATE TABLE `procs_priv` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `Db` char(64) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Routine_name` char(64) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT '',\n  `Routine_type` enum('FUNCTION','PROCEDURE','PACKAGE','PACKAGE BODY') NOT NULL,\n  `Grantor` varchar(384) NOT NULL DEFAULT '',\n  `Proc_priv` set('Execute','Alter Routine','Grant') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT '',\n  `Timestamp` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  PRIMARY KEY (`Host`,`Db`,`User`,`Routine_name`,`Routine_type`),\n  KEY `Grantor` (`Grantor`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Procedure privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Routine_name", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Routine_type", ty: "enum('FUNCTION','PROCEDURE','PACKAGE','PACKAGE BODY')", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: None, extra: "" },
        SpecCol { field: "Grantor", ty: "varchar(384)", collation: Some("utf8mb3_bin"), null: false, key: "MUL", default: Some(""), extra: "" },
        SpecCol { field: "Proc_priv", ty: "set('Execute','Alter Routine','Grant')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Timestamp", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
    ],
};

pub(super) const PROXIES_PRIV: Spec = Spec {
    name: "proxies_priv",
    view: false,
    create: "CREATE TABLE `proxies_priv` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Proxied_host` char(255) NOT NULL DEFAULT '',\n  `Proxied_user` char(128) NOT NULL DEFAULT '',\n  `With_grant` tinyint(1) NOT NULL DEFAULT 0,\n  `Grantor` varchar(384) NOT NULL DEFAULT '',\n  `Timestamp` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  PRIMARY KEY (`Host`,`User`,`Proxied_host`,`Proxied_user`),\n  KEY `Grantor` (`Grantor`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='User proxy privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Proxied_host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Proxied_user", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "With_grant", ty: "tinyint(1)", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "Grantor", ty: "varchar(384)", collation: Some("utf8mb3_bin"), null: false, key: "MUL", default: Some(""), extra: "" },
        SpecCol { field: "Timestamp", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
    ],
};

pub(super) const ROLES_MAPPING: Spec = Spec {
    name: "roles_mapping",
    view: false,
    create: "CREATE TABLE `roles_mapping` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Role` char(128) NOT NULL DEFAULT '',\n  `Admin_option` enum('N','Y') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT 'N',\n  UNIQUE KEY `Host` (`Host`,`User`,`Role`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Granted roles'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Role", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Admin_option", ty: "enum('N','Y')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some("N"), extra: "" },
    ],
};

pub(super) const SERVERS: Spec = Spec {
    name: "servers",
    view: false,
    create: "CREATE TABLE `servers` (\n  `Server_name` char(64) NOT NULL DEFAULT '',\n  `Host` varchar(2048) NOT NULL DEFAULT '',\n  `Db` char(64) NOT NULL DEFAULT '',\n  `Username` char(128) NOT NULL DEFAULT '',\n  `Password` char(64) NOT NULL DEFAULT '',\n  `Port` int(4) NOT NULL DEFAULT 0,\n  `Socket` char(108) NOT NULL DEFAULT '',\n  `Wrapper` char(64) NOT NULL DEFAULT '',\n  `Owner` varchar(512) NOT NULL DEFAULT '',\n  PRIMARY KEY (`Server_name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='MySQL Foreign Servers table'",
    columns: &[
        SpecCol { field: "Server_name", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Host", ty: "varchar(2048)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Db", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Username", ty: "char(128)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Password", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Port", ty: "int(4)", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "Socket", ty: "char(108)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Wrapper", ty: "char(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Owner", ty: "varchar(512)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
    ],
};

pub(super) const TABLES_PRIV: Spec = Spec {
    name: "tables_priv",
    view: false,
    create: "CREATE TABLE `tables_priv` (\n  `Host` char(255) NOT NULL DEFAULT '',\n  `Db` char(64) NOT NULL DEFAULT '',\n  `User` char(128) NOT NULL DEFAULT '',\n  `Table_name` char(64) NOT NULL DEFAULT '',\n  `Grantor` varchar(384) NOT NULL DEFAULT '',\n  `Timestamp` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n  `Table_priv` set('Select','Insert','Update','Delete','Create','Drop','Grant','References','Index','Alter','Create View','Show view','Trigger','Delete versioning rows') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT '',\n  `Column_priv` set('Select','Insert','Update','References') CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL DEFAULT '',\n  PRIMARY KEY (`Host`,`Db`,`User`,`Table_name`),\n  KEY `Grantor` (`Grantor`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Table privileges'",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Db", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Table_name", ty: "char(64)", collation: Some("utf8mb3_bin"), null: false, key: "PRI", default: Some(""), extra: "" },
        SpecCol { field: "Grantor", ty: "varchar(384)", collation: Some("utf8mb3_bin"), null: false, key: "MUL", default: Some(""), extra: "" },
        SpecCol { field: "Timestamp", ty: "timestamp", collation: None, null: false, key: "", default: Some("current_timestamp()"), extra: "on update current_timestamp()" },
        SpecCol { field: "Table_priv", ty: "set('Select','Insert','Update','Delete','Create','Drop','Grant','References','Index','Alter','Create View','Show view','Trigger','Delete versioning rows')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Column_priv", ty: "set('Select','Insert','Update','References')", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: Some(""), extra: "" },
    ],
};

pub(super) const USER: Spec = Spec {
    name: "user",
    view: true,
    create: "CREATE ALGORITHM=UNDEFINED DEFINER=`mariadb.sys`@`localhost` SQL SECURITY DEFINER VIEW `mysql`.`user` AS select `mysql`.`global_priv`.`Host` AS `Host`,`mysql`.`global_priv`.`User` AS `User`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.plugin') in ('mysql_native_password','mysql_old_password'),ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.authentication_string'),''),'') AS `Password`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 1,'Y','N') AS `Select_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 2,'Y','N') AS `Insert_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 4,'Y','N') AS `Update_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 8,'Y','N') AS `Delete_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 16,'Y','N') AS `Create_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 32,'Y','N') AS `Drop_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 64,'Y','N') AS `Reload_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 128,'Y','N') AS `Shutdown_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 256,'Y','N') AS `Process_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 512,'Y','N') AS `File_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 1024,'Y','N') AS `Grant_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 2048,'Y','N') AS `References_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 4096,'Y','N') AS `Index_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 8192,'Y','N') AS `Alter_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 16384,'Y','N') AS `Show_db_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 32768,'Y','N') AS `Super_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 65536,'Y','N') AS `Create_tmp_table_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 131072,'Y','N') AS `Lock_tables_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 262144,'Y','N') AS `Execute_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 524288,'Y','N') AS `Repl_slave_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 1048576,'Y','N') AS `Repl_client_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 2097152,'Y','N') AS `Create_view_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 4194304,'Y','N') AS `Show_view_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 8388608,'Y','N') AS `Create_routine_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 16777216,'Y','N') AS `Alter_routine_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 33554432,'Y','N') AS `Create_user_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 67108864,'Y','N') AS `Event_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 134217728,'Y','N') AS `Trigger_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 268435456,'Y','N') AS `Create_tablespace_priv`,if(json_value(`mysql`.`global_priv`.`Priv`,'$.access') & 536870912,'Y','N') AS `Delete_history_priv`,elt(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.ssl_type'),0) + 1,'','ANY','X509','SPECIFIED') AS `ssl_type`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.ssl_cipher'),'') AS `ssl_cipher`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.x509_issuer'),'') AS `x509_issuer`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.x509_subject'),'') AS `x509_subject`,cast(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.max_questions'),0) as unsigned) AS `max_questions`,cast(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.max_updates'),0) as unsigned) AS `max_updates`,cast(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.max_connections'),0) as unsigned) AS `max_connections`,cast(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.max_user_connections'),0) as signed) AS `max_user_connections`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.plugin'),'') AS `plugin`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.authentication_string'),'') AS `authentication_string`,if(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.password_last_changed'),1) = 0,'Y','N') AS `password_expired`,elt(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.is_role'),0) + 1,'N','Y') AS `is_role`,ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.default_role'),'') AS `default_role`,cast(ifnull(json_value(`mysql`.`global_priv`.`Priv`,'$.max_statement_time'),0.0) as decimal(12,6)) AS `max_statement_time` from `mysql`.`global_priv`",
    columns: &[
        SpecCol { field: "Host", ty: "char(255)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "User", ty: "char(128)", collation: Some("utf8mb3_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "Password", ty: "longtext", collation: Some("utf8mb4_bin"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Select_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Insert_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Update_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Delete_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Drop_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Reload_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Shutdown_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Process_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "File_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Grant_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "References_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Index_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Alter_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Show_db_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Super_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_tmp_table_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Lock_tables_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Execute_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Repl_slave_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Repl_client_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_view_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Show_view_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_routine_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Alter_routine_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_user_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Event_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Trigger_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Create_tablespace_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "Delete_history_priv", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "ssl_type", ty: "varchar(9)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "ssl_cipher", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "x509_issuer", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "x509_subject", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "max_questions", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "max_updates", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "max_connections", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "max_user_connections", ty: "bigint(21)", collation: None, null: false, key: "", default: Some("0"), extra: "" },
        SpecCol { field: "plugin", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "authentication_string", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "password_expired", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "is_role", ty: "varchar(1)", collation: Some("latin1_swedish_ci"), null: true, key: "", default: None, extra: "" },
        SpecCol { field: "default_role", ty: "longtext", collation: Some("utf8mb4_bin"), null: false, key: "", default: Some(""), extra: "" },
        SpecCol { field: "max_statement_time", ty: "decimal(12,6)", collation: None, null: false, key: "", default: Some("0.000000"), extra: "" },
    ],
};

pub(super) const GENERAL_LOG: Spec = Spec {
    name: "general_log",
    view: false,
    create: "CREATE TABLE `general_log` (\n  `event_time` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),\n  `user_host` mediumtext NOT NULL,\n  `thread_id` bigint(21) unsigned NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `command_type` varchar(64) NOT NULL,\n  `argument` mediumtext NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci COMMENT='General log'",
    columns: &[
        SpecCol { field: "event_time", ty: "timestamp(6)", collation: None, null: false, key: "", default: Some("current_timestamp(6)"), extra: "on update current_timestamp(6)" },
        SpecCol { field: "user_host", ty: "mediumtext", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "thread_id", ty: "bigint(21) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "server_id", ty: "int(10) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "command_type", ty: "varchar(64)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "argument", ty: "mediumtext", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
    ],
};

pub(super) const SLOW_LOG: Spec = Spec {
    name: "slow_log",
    view: false,
    create: "CREATE TABLE `slow_log` (\n  `start_time` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),\n  `user_host` mediumtext NOT NULL,\n  `query_time` time(6) NOT NULL,\n  `lock_time` time(6) NOT NULL,\n  `rows_sent` bigint(20) unsigned NOT NULL,\n  `rows_examined` bigint(20) unsigned NOT NULL,\n  `db` varchar(512) NOT NULL,\n  `last_insert_id` int(11) NOT NULL,\n  `insert_id` int(11) NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `sql_text` mediumtext NOT NULL,\n  `thread_id` bigint(21) unsigned NOT NULL,\n  `rows_affected` bigint(20) unsigned NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci COMMENT='Slow log'",
    columns: &[
        SpecCol { field: "start_time", ty: "timestamp(6)", collation: None, null: false, key: "", default: Some("current_timestamp(6)"), extra: "on update current_timestamp(6)" },
        SpecCol { field: "user_host", ty: "mediumtext", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "query_time", ty: "time(6)", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "lock_time", ty: "time(6)", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "rows_sent", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "rows_examined", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "db", ty: "varchar(512)", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "last_insert_id", ty: "int(11)", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "insert_id", ty: "int(11)", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "server_id", ty: "int(10) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "sql_text", ty: "mediumtext", collation: Some("utf8mb3_general_ci"), null: false, key: "", default: None, extra: "" },
        SpecCol { field: "thread_id", ty: "bigint(21) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
        SpecCol { field: "rows_affected", ty: "bigint(20) unsigned", collation: None, null: false, key: "", default: None, extra: "" },
    ],
};

/// Every table, by name (SHOW TABLES FROM mysql's order).
pub(super) const ALL: &[Spec] = &[
    COLUMNS_PRIV,
    DB,
    EVENT,
    FUNC,
    GENERAL_LOG,
    GLOBAL_PRIV,
    GTID_SLAVE_POS,
    PLUGIN,
    PROC,
    PROCS_PRIV,
    PROXIES_PRIV,
    ROLES_MAPPING,
    SERVERS,
    SLOW_LOG,
    TABLES_PRIV,
    USER,
];
