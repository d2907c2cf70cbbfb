// Manish Yadav's ManagedSettingsStore snippets (shared/seeds/003), as published, with the `import FamilyControls`
// they leave out and straight quotes for the article's typographic ones (an iOS compiler refuses both too).
import FamilyControls
import ManagedSettings

func updateRestrictions(for selectedApps: FamilyActivitySelection) {
 let store = ManagedSettingsStore()
 
 // Apply shields to selected applications
 if store.shield.applications == nil {
 store.shield.applications = selectedApps.applicationTokens
 }
}

func unblockApps() {
 let store = ManagedSettingsStore()
 
 // Clear all app restrictions
 store.shield.applications = nil
 print("All restrictions have been cleared.")
}
