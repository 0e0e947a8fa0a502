//! Server error codes and their SQLSTATEs, as MariaDB 10.11 sends them (names from
//! `include/mysqld_error.h`, SQLSTATEs from `sql/share/errmsg-utf8.txt`).
//!
//! Only the codes onelog raises are here; add one when a new error is answered, with the
//! SQLSTATE MariaDB pairs it with (the message text stays with the code that raises it:
//! MariaDB's wording, filled with that error's arguments).
//!
//! Invariant: codes are unique and sorted in [`ALL`] (asserted at compile time, and a unit
//! test checks), so [`by_code`] finds each.

/// A MariaDB server error: its number, its SQLSTATE and its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode {
    pub code: u16,
    pub sqlstate: &'static str,
    pub name: &'static str,
}

/// Defines each code as a constant and [`ALL`], the list of them in the order written
/// (by number: a unit test checks).
macro_rules! error_codes {
    ($($name:ident = $code:literal, $state:literal;)*) => {
        $(
            pub const $name: ErrorCode = ErrorCode {
                code: $code,
                sqlstate: $state,
                name: stringify!($name),
            };
        )*
        /// Every code above, sorted by number.
        pub const ALL: &[ErrorCode] = &[$($name),*];
    };
}

error_codes! {
    ER_CANT_CREATE_TABLE = 1005, "HY000";
    ER_DB_CREATE_EXISTS = 1007, "HY000";
    ER_DB_DROP_EXISTS = 1008, "HY000";
    ER_DISK_FULL = 1021, "HY000";
    ER_ERROR_ON_RENAME = 1025, "HY000";
    ER_ERROR_ON_WRITE = 1026, "HY000";
    ER_GET_ERRNO = 1030, "HY000";
    ER_ILLEGAL_HA = 1031, "HY000";
    ER_KEY_NOT_FOUND = 1032, "HY000";
    ER_OPEN_AS_READONLY = 1036, "HY000";
    ER_CON_COUNT_ERROR = 1040, "08004";
    ER_HANDSHAKE_ERROR = 1043, "08S01";
    ER_DBACCESS_DENIED_ERROR = 1044, "42000";
    ER_ACCESS_DENIED_ERROR = 1045, "28000";
    ER_NO_DB_ERROR = 1046, "3D000";
    ER_UNKNOWN_COM_ERROR = 1047, "08S01";
    ER_BAD_NULL_ERROR = 1048, "23000";
    ER_BAD_DB_ERROR = 1049, "42000";
    ER_TABLE_EXISTS_ERROR = 1050, "42S01";
    ER_BAD_TABLE_ERROR = 1051, "42S02";
    ER_NON_UNIQ_ERROR = 1052, "23000";
    ER_SERVER_SHUTDOWN = 1053, "08S01";
    ER_BAD_FIELD_ERROR = 1054, "42S22";
    ER_TOO_LONG_IDENT = 1059, "42000";
    ER_DUP_FIELDNAME = 1060, "42S21";
    ER_DUP_KEYNAME = 1061, "42000";
    ER_DUP_ENTRY = 1062, "23000";
    ER_WRONG_FIELD_SPEC = 1063, "42000";
    ER_PARSE_ERROR = 1064, "42000";
    ER_EMPTY_QUERY = 1065, "42000";
    ER_INVALID_DEFAULT = 1067, "42000";
    ER_MULTIPLE_PRI_KEY = 1068, "42000";
    ER_KEY_COLUMN_DOES_NOT_EXIST = 1072, "42000";
    ER_TOO_BIG_FIELDLENGTH = 1074, "42000";
    ER_WRONG_AUTO_KEY = 1075, "42000";
    ER_CANT_REMOVE_ALL_FIELDS = 1090, "42000";
    ER_CANT_DROP_FIELD_OR_KEY = 1091, "42000";
    ER_UPDATE_TABLE_USED = 1093, "HY000";
    ER_NO_SUCH_THREAD = 1094, "HY000";
    ER_KILL_DENIED_ERROR = 1095, "HY000";
    ER_NO_TABLES_USED = 1096, "HY000";
    ER_TOO_BIG_SET = 1097, "HY000";
    ER_UNKNOWN_ERROR = 1105, "HY000";
    ER_UNKNOWN_TABLE = 1109, "42S02";
    ER_INVALID_GROUP_FUNC_USE = 1111, "HY000";
    ER_UNKNOWN_CHARACTER_SET = 1115, "42000";
    ER_PASSWORD_NO_MATCH = 1133, "28000";
    ER_WRONG_VALUE_COUNT_ON_ROW = 1136, "21S01";
    ER_REGEXP_ERROR = 1139, "42000";
    ER_NONEXISTING_GRANT = 1141, "42000";
    ER_TABLEACCESS_DENIED_ERROR = 1142, "42000";
    ER_NO_SUCH_TABLE = 1146, "42S02";
    ER_NET_PACKET_TOO_LARGE = 1153, "08S01";
    ER_NET_PACKETS_OUT_OF_ORDER = 1156, "08S01";
    ER_TOO_MANY_ROWS = 1172, "42000";
    ER_REQUIRES_PRIMARY_KEY = 1173, "42000";
    ER_UNKNOWN_SYSTEM_VARIABLE = 1193, "HY000";
    ER_TRANS_CACHE_FULL = 1197, "HY000";
    ER_SLAVE_MUST_STOP = 1198, "HY000";
    ER_BAD_SLAVE = 1200, "HY000";
    ER_MASTER_INFO = 1201, "HY000";
    ER_LOCK_WAIT_TIMEOUT = 1205, "HY000";
    ER_WRONG_ARGUMENTS = 1210, "HY000";
    ER_LOCK_DEADLOCK = 1213, "40001";
    ER_ERROR_WHEN_EXECUTING_COMMAND = 1220, "HY000";
    ER_WRONG_USAGE = 1221, "HY000";
    ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT = 1222, "21000";
    ER_SPECIFIC_ACCESS_DENIED_ERROR = 1227, "42000";
    ER_LOCAL_VARIABLE = 1228, "HY000";
    ER_GLOBAL_VARIABLE = 1229, "HY000";
    ER_WRONG_VALUE_FOR_VAR = 1231, "42000";
    ER_WRONG_TYPE_FOR_VAR = 1232, "42000";
    ER_NOT_SUPPORTED_YET = 1235, "42000";
    ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236, "HY000";
    ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238, "HY000";
    ER_WRONG_FK_DEF = 1239, "42000";
    ER_OPERAND_COLUMNS = 1241, "21000";
    ER_SUBQUERY_NO_1_ROW = 1242, "21000";
    ER_UNKNOWN_STMT_HANDLER = 1243, "HY000";
    ER_COLLATION_CHARSET_MISMATCH = 1253, "42000";
    ER_SLAVE_WAS_RUNNING = 1254, "HY000";
    ER_SLAVE_WAS_NOT_RUNNING = 1255, "HY000";
    ER_CUT_VALUE_GROUP_CONCAT = 1260, "HY000";
    ER_WARN_DATA_OUT_OF_RANGE = 1264, "22003";
    WARN_DATA_TRUNCATED = 1265, "01000";
    ER_CANT_AGGREGATE_2COLLATIONS = 1267, "HY000";
    ER_CANT_AGGREGATE_3COLLATIONS = 1270, "HY000";
    ER_CANT_AGGREGATE_NCOLLATIONS = 1271, "HY000";
    ER_UNKNOWN_COLLATION = 1273, "HY000";
    ER_BAD_SLAVE_UNTIL_COND = 1277, "HY000";
    ER_UNKNOWN_STORAGE_ENGINE = 1286, "42000";
    ER_NON_UPDATABLE_TABLE = 1288, "HY000";
    ER_OPTION_PREVENTS_STATEMENT = 1290, "HY000";
    ER_DUPLICATED_VALUE_IN_TYPE = 1291, "HY000";
    ER_TRUNCATED_WRONG_VALUE = 1292, "22007";
    ER_INVALID_ON_UPDATE = 1294, "HY000";
    ER_GET_ERRMSG = 1296, "HY000";
    ER_WARN_ALLOWED_PACKET_OVERFLOWED = 1301, "HY000";
    ER_SP_DOES_NOT_EXIST = 1305, "42000";
    ER_QUERY_INTERRUPTED = 1317, "70100";
    ER_SP_FETCH_NO_DATA = 1329, "02000";
    ER_WRONG_OBJECT = 1347, "HY000";
    ER_NONUPDATEABLE_COLUMN = 1348, "HY000";
    ER_VIEW_WRONG_LIST = 1353, "HY000";
    ER_VIEW_INVALID = 1356, "HY000";
    ER_NO_DEFAULT_FOR_FIELD = 1364, "HY000";
    ER_DIVISION_BY_ZERO = 1365, "22012";
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD = 1366, "22007";
    ER_ILLEGAL_VALUE_FOR_TYPE = 1367, "22007";
    ER_VIEW_CHECK_FAILED = 1369, "44000";
    ER_PASSWD_LENGTH = 1372, "HY000";
    ER_UNKNOWN_TARGET_BINLOG = 1373, "HY000";
    ER_BINLOG_PURGE_FATAL_ERR = 1377, "HY000";
    ER_LOG_IN_USE = 1378, "HY000";
    ER_VIEW_MULTIUPDATE = 1393, "HY000";
    ER_VIEW_NO_INSERT_FIELD_LIST = 1394, "HY000";
    ER_VIEW_DELETE_MERGE_VIEW = 1395, "HY000";
    ER_CANNOT_USER = 1396, "HY000";
    ER_DATA_TOO_LONG = 1406, "22001";
    ER_TABLE_DEF_CHANGED = 1412, "HY000";
    ER_STMT_HAS_NO_OPEN_CURSOR = 1421, "HY000";
    ER_NO_DEFAULT_FOR_VIEW_FIELD = 1423, "HY000";
    ER_TOO_BIG_SCALE = 1425, "42000";
    ER_TOO_BIG_PRECISION = 1426, "42000";
    ER_M_BIGGER_THAN_D = 1427, "42000";
    ER_STACK_OVERRUN_NEED_MORE = 1436, "HY000";
    ER_TOO_BIG_DISPLAYWIDTH = 1439, "42000";
    ER_NO_SUCH_USER = 1449, "HY000";
    ER_FORBID_SCHEMA_CHANGE = 1450, "HY000";
    ER_ROW_IS_REFERENCED_2 = 1451, "23000";
    ER_NO_REFERENCED_ROW_2 = 1452, "23000";
    ER_VIEW_RECURSIVE = 1462, "HY000";
    ER_NON_INSERTABLE_TABLE = 1471, "HY000";
    ER_PLUGIN_IS_NOT_LOADED = 1524, "HY000";
    ER_BINLOG_ROW_LOGGING_FAILED = 1534, "HY000";
    ER_DROP_INDEX_FK = 1553, "HY000";
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582, "42000";
    WARN_OPTION_IGNORED = 1618, "HY000";
    ER_VARIABLE_IS_READONLY = 1621, "HY000";
    ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE = 1624, "HY000";
    ER_DATA_OUT_OF_RANGE = 1690, "22003";
    ER_ACCESS_DENIED_NO_PASSWORD_ERROR = 1698, "28000";
    ER_TRUNCATE_ILLEGAL_FK = 1701, "42000";
    ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MIN = 1703, "HY000";
    ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX = 1704, "HY000";
    ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792, "25006";
    ER_DUP_CONSTRAINT_NAME = 1826, "HY000";
    ER_FK_COLUMN_CANNOT_DROP = 1828, "HY000";
    ER_FK_COLUMN_CANNOT_DROP_CHILD = 1829, "HY000";
    ER_MALFORMED_PACKET = 1835, "HY000";
    ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED = 1901, "HY000";
    ER_CONNECTION_KILLED = 1927, "70100";
    ER_INCORRECT_GTID_STATE = 1941, "HY000";
    ER_DUPLICATE_GTID_DOMAIN = 1943, "HY000";
    ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG = 1947, "HY000";
    ER_MASTER_GTID_POS_MISSING_DOMAIN = 1948, "HY000";
    ER_UNTIL_REQUIRES_USING_GTID = 1949, "HY000";
    ER_GTID_STRICT_OUT_OF_ORDER = 1950, "HY000";
    ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_GTID_DOMAIN_ID_SEQ_NO = 1953, "HY000";
    ER_PRIOR_COMMIT_FAILED = 1964, "HY000";
    ER_IT_IS_A_VIEW = 1965, "42S02";
    ER_STATEMENT_TIMEOUT = 1969, "70100";
    ER_SET_STATEMENT_NOT_SUPPORTED = 1971, "42000";
    ER_WITH_COL_WRONG_LIST = 4002, "HY000";
    ER_DUP_QUERY_NAME = 4004, "HY000";
    ER_RECURSIVE_WITHOUT_ANCHORS = 4005, "HY000";
    ER_CONSTRAINT_FAILED = 4025, "23000";
    ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION = 4078, "HY000";
    ER_ILLEGAL_PARAMETER_DATA_TYPE_FOR_OPERATION = 4079, "HY000";
    ER_UNKNOWN_VIEW = 4092, "42S02";
    ER_BACKUP_NOT_RUNNING = 4146, "HY000";
    ER_BACKUP_WRONG_STAGE = 4147, "HY000";
    ER_BACKUP_UNKNOWN_STAGE = 4149, "HY000";
    WARN_OPTION_CHANGING = 4190, "HY000";
    ER_CM_OPTION_MISSING_REQUIREMENT = 4191, "HY000";
}

/// The error with number `code`, if onelog knows it.
// The invariant, checked when the crate compiles: codes strictly increase in `ALL` (so the
// binary search of `by_code` finds each), and every SQLSTATE has 5 characters.
const _: () = {
    let mut i = 0;
    while i < ALL.len() {
        assert!(
            i == 0 || ALL[i - 1].code < ALL[i].code,
            "errors::ALL not sorted and unique"
        );
        assert!(ALL[i].sqlstate.len() == 5, "a SQLSTATE has 5 characters");
        i += 1;
    }
};

pub fn by_code(code: u16) -> Option<ErrorCode> {
    ALL.binary_search_by_key(&code, |e| e.code)
        .ok()
        .map(|i| ALL[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_unique_and_found_by_number() {
        for w in ALL.windows(2) {
            assert!(w[0].code < w[1].code, "{:?} then {:?}", w[0], w[1]);
        }
        for e in ALL {
            assert_eq!(by_code(e.code), Some(*e));
            assert_eq!(e.sqlstate.len(), 5, "{e:?}");
        }
        assert_eq!(by_code(1064), Some(ER_PARSE_ERROR));
        assert_eq!(by_code(9999), None);
    }
}
