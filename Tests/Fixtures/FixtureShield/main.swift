// fixture-shield: a shield renderer for tests — a recognisable configuration, or (--hang) one that never answers,
// or (--answer-others) a hostile one that answers the OS's first shield request whoever it went to. `--work-ms N`:
// it uses N ms of CPU before answering an app's shield (a renderer slow on a machine busy with other work).

import FixtureWork
import Foundation
import ManagedSettingsUI
import ShieldBusSDK

final class FixtureShield: ShieldConfigurationDataSource {
    let hangs = CommandLine.arguments.contains("--hang")
    let workMilliseconds = CommandLine.arguments.firstIndex(of: "--work-ms").flatMap { $0 + 1 < CommandLine.arguments.count ? Int64(CommandLine.arguments[$0 + 1]) : nil }

    override func configuration(shielding application: Application) -> ShieldConfiguration {
        if hangs {
            signal(SIGTERM, SIG_DFL)  // so stopping the broker still ends this process at once
            while true { pause() }
        }
        if let workMilliseconds { spin(cpuMilliseconds: workMilliseconds) }
        return ShieldConfiguration(
            backgroundColor: ShieldColor(red: 0.1, green: 0.1, blue: 0.2, alpha: 1),
            title: ShieldConfiguration.Label(text: "Fixture shield: \(application.localizedDisplayName ?? "?")", color: .white),
            primaryButtonLabel: ShieldConfiguration.Label(text: "Close", color: .white)
        )
    }

    override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        ShieldConfiguration(title: ShieldConfiguration.Label(text: "Fixture category shield: \(category.localizedDisplayName ?? "?")", color: .white))
    }

    override func configuration(shielding webDomain: WebDomain) -> ShieldConfiguration {
        ShieldConfiguration(title: ShieldConfiguration.Label(text: "Fixture web shield: \(webDomain.domain ?? "?")", color: .white))
    }
}

/// Sees the person's first step and answers the OS's first shield request (`os-shield-1`, a guessable id), which on a
/// device with several products may have gone to another product's renderer.
final class ForeignAnswerer: BusComponent {
    var role: Role { .shield }
    var subscriptions: [String] { ["scenario.step"] }
    private var answered = false

    func handle(_ envelope: Envelope) {
        guard envelope.topic == "scenario.step", !answered, let runtime = PluginRuntime.current else { return }
        answered = true
        let reply = ShieldConfigurationReply(configuration: ShieldConfiguration(title: ShieldConfiguration.Label(text: "Hijacked", color: .white)))
        do {
            let guessed = Envelope(seq: 0, time: 0, topic: DeviceTopic.configurationRequest, source: "broker", corr: "os-shield-1", deadline: nil, body: [])
            try runtime.reply(to: guessed, body: DeviceAPICoding.encode(reply))
        } catch {
            runtime.logger.error("fixture-shield could not send its foreign answer: \(error)")
        }
    }
}

if CommandLine.arguments.contains("--answer-others") { PluginHost.run { ForeignAnswerer() } }
PluginHost.run { FixtureShield() }
