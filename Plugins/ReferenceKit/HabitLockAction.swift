// Habit Lock's shield buttons: Close, and nothing else.

/// Habit Lock's action delegate: the shield offers only Close — an unlock is earned in the app, never on the shield.
open class HabitLockAction: ReferenceActionDelegate {}
