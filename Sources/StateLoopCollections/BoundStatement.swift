import Foundation
import GRDB
import GRDBSQLite

/// A statement prepared by GRDB (`Database.cachedStatement(sql:)`) whose arguments are
/// bound straight through SQLite's C calls: for the statements a first sync runs for each of
/// 100,000 rows, where GRDB's `execute(arguments:)` (an array of values converted, checked and
/// bound one by one) cost about a quarter of the write. Everything else goes through GRDB.
///
/// Bind every parameter, then ``run()``; the statement is reset for the next row.
struct BoundStatement {
    private let statement: Statement
    private let handle: OpaquePointer

    /// Takes `statement`, prepared by GRDB on the connection it runs on, and resets it: GRDB may
    /// have left it done after its last use, and SQLite refuses to bind a statement then.
    init(_ statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
    }

    /// Binds `text` to the parameter at `index` (from 1), up to its first NUL byte, as GRDB
    /// binds text: the rows' other statements, bound by GRDB, look the same value up.
    func bind(_ index: Int32, _ text: String) throws {
        // SQLite copies the bytes (SQLITE_TRANSIENT): the Swift string's storage is only lent.
        try check(text.withCString { sqlite3_bind_text(handle, index, $0, -1, Self.transient) })
    }

    /// Binds `data` as a blob to the parameter at `index` (from 1).
    func bind(_ index: Int32, _ data: Data) throws {
        let code = try data.withUnsafeBytes { bytes in
            // An empty blob has no base address, and a null pointer would bind NULL.
            sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(Self.nothing), try length(bytes.count), Self.transient)
        }
        try check(code)
    }

    /// Binds `number` to the parameter at `index` (from 1).
    func bind(_ index: Int32, _ number: Int64) throws {
        try check(sqlite3_bind_int64(handle, index, number))
    }

    /// A value's length as SQLite takes it: a value over 2 GB is refused as SQLite would refuse
    /// it (too big), rather than trapping on the conversion.
    private func length(_ count: Int) throws -> Int32 {
        guard let length = Int32(exactly: count) else {
            throw DatabaseError(resultCode: .SQLITE_TOOBIG, message: "a value of \(count) bytes", sql: statement.sql)
        }
        return length
    }

    /// Throws a bind's failure (a value too big, an index out of range), which would otherwise
    /// leave the parameter NULL and fail later for another reason.
    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))), sql: statement.sql)
        }
    }

    /// Runs the statement, which returns no rows, and resets it. Throws SQLite's error as a
    /// `DatabaseError`, with the statement's SQL.
    func run() throws {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            // Read before the reset, which may set the connection's message again.
            let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
        sqlite3_reset(handle)
    }

    /// SQLite's "copy the bytes now" destructor, which the C header spells as a cast of -1.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Where an empty blob points: the static bytes of an empty string, never read.
    private static var nothing: UnsafePointer<UInt8> { ("" as StaticString).utf8Start }
}
