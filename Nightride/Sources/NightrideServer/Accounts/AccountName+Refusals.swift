import NightrideModel
import StateLoopServer

extension AccountName {
    /// A sign-in's name as kept, checked with the login form's limits; refused as `invalidName`.
    static func checkedLogin(_ name: String) throws(RideRefusal) -> String {
        do throws(Refusal) {
            return try checked(name, maximumLength: LoginRequest.maximumNameLength, maximumBytes: LoginRequest.maximumNameBytes)
        } catch {
            throw RideRefusal(.invalidName, error.description)
        }
    }

    /// Checks a new account's name against the rules of new names; refused as `invalidName`.
    static func checkNewAccount(_ name: String) throws(RideRefusal) {
        do throws(Refusal) {
            _ = try checkedForSignUp(name)
        } catch {
            throw RideRefusal(.invalidName, error.description)
        }
    }
}
