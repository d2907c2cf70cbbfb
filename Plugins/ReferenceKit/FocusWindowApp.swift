// Focus Window's companion app: the focus hours' schedules.

import DeviceActivity
import Foundation
import ShieldBusSDK

/// Focus Window's app: one repeating schedule per window of focus hours; the monitor shields and lifts by them.
open class FocusWindowApp: ReferenceCompanionApp {
    open override func startProductSchedules(afterLostAuthorization: Bool) throws {
        registerReserve()
        for (index, hours) in options.focusHours.enumerated() {
            try center.startMonitoring(names.focus(index), during: DeviceActivitySchedule(
                intervalStart: hours.startComponents, intervalEnd: hours.endComponents, repeats: true))
        }
    }
}
