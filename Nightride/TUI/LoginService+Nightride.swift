import Foundation
import LoginFeature
import NightrideClient
import StateLoopSync

extension LoginService {
    /// The login screen's service against a Nightride server's `POST /login`: the token for the
    /// right password (or for a name seen for the first time, which the password then guards),
    /// `nil` for a wrong password (HTTP 401), and a ``LoginProblem`` with a message for the
    /// screen for anything else.
    public static func nightride(server: URL) -> LoginService {
        LoginService { username, password in
            do {
                return try await NightrideAPI.login(server: server, name: username, password: password).token
            } catch let error as HTTPStatusError where error.status == 401 {
                return nil
            } catch let error as HTTPStatusError {
                throw LoginProblem(description: "the server refused the login (HTTP \(error.status))")
            } catch {
                throw LoginProblem(description: "cannot reach \(server.absoluteString): \(NightrideAPI.message(for: error))")
            }
        }
    }
}

/// A login that failed for another reason than a wrong password.
public struct LoginProblem: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for the user.
    public let description: String
}
