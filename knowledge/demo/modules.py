"""The demo modules of `seed_demo`: titles, summaries, sections and the files they were built from."""

from dataclasses import dataclass

from knowledge.models import ModuleStatus


@dataclass(frozen=True)
class DemoModule:
    title: str
    summary: str
    status: ModuleStatus
    sections: tuple[tuple[str, str], ...]
    source_files: tuple[str, ...]


MODULES: dict[str, tuple[DemoModule, ...]] = {
    "acme": (
        DemoModule(
            title="Welcome to Acme Engineering",
            summary="The first month of a new engineer: accounts, the monorepo, reviews and the release train.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Your first week",
                    "Clone the `platform` monorepo, run `make bootstrap`, and merge one `good-first-change` "
                    "issue by Friday. The point is to walk the whole path once: branch, review, CI, deploy.",
                ),
                (
                    "Code review",
                    "Every change needs one approving review from a code owner. Keep pull requests small "
                    "enough to read in twenty minutes, and prefix optional remarks with *nit:*.",
                ),
                (
                    "Shipping",
                    "Merges deploy to staging automatically. Production trains leave at 10:00 and 15:00 UTC; "
                    "unfinished work ships dark behind a feature flag.",
                ),
            ),
            source_files=("engineering-onboarding.md", "release-and-deployment-process.md"),
        ),
        DemoModule(
            title="Security Essentials",
            summary="Hardware security keys, secrets handling, production access and how to report an incident.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Accounts and keys",
                    "Single sign-on everywhere, passwords from the password manager, and a hardware security "
                    "key as the second factor. Text-message codes are not accepted where keys are supported.",
                ),
                (
                    "Secrets",
                    "Secrets live in the secrets manager. An exposed secret is compromised even if deleted a "
                    "minute later: rotate it, then report its *name* (never its value) in #security.",
                ),
                (
                    "Report first",
                    "Lost laptop, phishing, unexpected data access: report in #security or page the security "
                    "on-call. An early false alarm costs minutes; a late real report costs customers.",
                ),
            ),
            source_files=("information-security-policy.md", "incident-response-runbook.md"),
        ),
        DemoModule(
            title="Handling Support Tickets",
            summary="Priorities, response targets and troubleshooting for Acme Cloud support engineers.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Priorities",
                    "P1 within 30 minutes, P2 within 4 hours, P3 within one business day, P4 within two. "
                    "A first response is a human reply that shows we understood the problem.",
                ),
                (
                    "Workflows that stop running",
                    "Check the status page, then the run history. Twenty consecutive failures pause a "
                    "workflow; an expired connection (`401 Unauthorized`) is the usual cause.",
                ),
            ),
            source_files=("customer-support-playbook.md", "acme-cloud-product-guide.md"),
        ),
        DemoModule(
            title="On-call and Incident Response",
            summary="Severity levels, incident roles and the first thirty minutes of an Acme Cloud incident.",
            status=ModuleStatus.DRAFT,
            sections=(
                (
                    "Declaring",
                    "Type `/incident declare` with a one-line description and a best-guess severity. "
                    "Do not wait until you understand the cause.",
                ),
                (
                    "Stop the bleeding",
                    "Roll back a recent deploy, disable a flag, scale out, or fail over the database: "
                    "mitigate first, find the root cause later.",
                ),
            ),
            source_files=("incident-response-runbook.md", "release-and-deployment-process.md"),
        ),
        DemoModule(
            title="Spending Company Money",
            summary="Approval limits, travel booking, per diem and how to file an Acme expense claim.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Approval limits",
                    "Under 200 dollars: no approval. 200 to 2,000: your manager. Over 2,000: manager and "
                    "department head. Software always goes through IT procurement.",
                ),
                (
                    "Claims",
                    "Submit within thirty days with a receipt and a business purpose; claims older than "
                    "ninety days are not reimbursed.",
                ),
            ),
            source_files=("expense-and-travel-policy.md",),
        ),
        DemoModule(
            title="Customer Data and Privacy",
            summary="Controller and processor roles, the retention schedule and individuals' rights requests.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Retention",
                    "Run payloads 30 days (Team) or 365 days (Enterprise), logs 30 days, backups 35 days, "
                    "audit logs two years. Deletion jobs enforce every period.",
                ),
                (
                    "Requests",
                    "Answer access and deletion requests within 30 days; forward requests about customer "
                    "content to the customer within five working days.",
                ),
            ),
            source_files=("data-retention-and-privacy-policy.md",),
        ),
        DemoModule(
            title="Legacy VPN Setup",
            summary="How the old office VPN was configured before single sign-on replaced it.",
            status=ModuleStatus.ARCHIVED,
            sections=(
                (
                    "Retired",
                    "The office VPN was retired when every internal tool moved behind single sign-on with "
                    "hardware security keys. Kept for reference only.",
                ),
            ),
            source_files=("information-security-policy.md",),
        ),
    ),
    "globex": (
        DemoModule(
            title="Plant Orientation",
            summary="Your first two weeks at the Springfield plant: halls, shifts, the safety induction, your buddy.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "The plant",
                    "Hall A stamping presses, Hall B robotic welding, Hall C powder coating, Hall D assembly, "
                    "inspection and shipping. Your team leader is your first point of contact.",
                ),
                (
                    "Shifts",
                    "Early 06:00-14:00, late 14:00-22:00, night 22:00-06:00. Arrive ten minutes early for "
                    "the handover; new associates work early shift for four weeks.",
                ),
                (
                    "Safety induction",
                    "One and a half days, a written test (80 percent to pass) and a walk-through on the "
                    "floor. No production hall without an escort until you pass.",
                ),
            ),
            source_files=("plant-onboarding-handbook.md", "workplace-safety-manual.md"),
        ),
        DemoModule(
            title="Lockout/Tagout Certification",
            summary="The six-step lockout and tagout procedure for presses, robot cells and conveyors.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "The six steps",
                    "Prepare, notify, shut down, isolate and lock, release stored energy (die blocks, bleed "
                    "hydraulics), verify. Every person applies their own red padlock.",
                ),
                (
                    "Lock removal",
                    "Only the person who applied a lock removes it. Anything else follows the maintenance "
                    "manager's lock removal procedure.",
                ),
            ),
            source_files=("workplace-safety-manual.md", "equipment-maintenance-guide.md"),
        ),
        DemoModule(
            title="Quality at the Line",
            summary="First-off checks, the red quarantine bin, nonconformance records and 8D corrective action.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Checks at the station",
                    "First part after every start-up, die change or coil change, then every fiftieth part. "
                    "Diamond-marked characteristics are checked on every part.",
                ),
                (
                    "Nonconforming parts",
                    "Stop, red quarantine bin, call the team leader. The quality engineer decides rework, "
                    "scrap or use-as-is (only with the customer's written deviation).",
                ),
            ),
            source_files=("quality-management-procedures.md",),
        ),
        DemoModule(
            title="Working With Suppliers",
            summary="Approval limits, competitive quotations, supplier approval and scorecards.",
            status=ModuleStatus.DRAFT,
            sections=(
                (
                    "Approval limits",
                    "Department manager to 5,000 dollars, plant manager to 50,000, vice-president of "
                    "operations to 250,000, chief financial officer above.",
                ),
                (
                    "Scorecards",
                    "Monthly: parts per million rejected, and delivery within two days early to zero days "
                    "late. Three months below target means a development plan.",
                ),
            ),
            source_files=("supplier-and-purchasing-policy.md",),
        ),
        DemoModule(
            title="Warranty Claims",
            summary="Registering, analysing and deciding customer warranty claims on brackets and housings.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Coverage",
                    "24 months from delivery or 2,000 operating hours, whichever comes first, unless the "
                    "customer's contract says otherwise.",
                ),
                (
                    "Five steps",
                    "Register, get the failed parts back, laboratory analysis within fifteen working days, "
                    "recommendation by the quality engineer, decision and credit note.",
                ),
            ),
            source_files=("customer-service-and-warranty-playbook.md", "quality-management-procedures.md"),
        ),
        DemoModule(
            title="Emergency Drills",
            summary="Alarms, assembly points, spills and first aid at the Springfield plant.",
            status=ModuleStatus.PUBLISHED,
            sections=(
                (
                    "Evacuation",
                    "Continuous siren: stop, make safe in seconds, leave by the nearest exit to your hall's "
                    "assembly point. Team leaders report missing people to the fire wardens.",
                ),
                (
                    "Spills",
                    "Under twenty litres: trained operators use the yellow spill kit and keep the spill away "
                    "from drains. Anything larger: evacuate and call extension 2222.",
                ),
            ),
            source_files=("incident-and-emergency-response-plan.md",),
        ),
        DemoModule(
            title="Paper Travel Forms (retired)",
            summary="The paper travel request form used before the travel system went live.",
            status=ModuleStatus.ARCHIVED,
            sections=(
                (
                    "Retired",
                    "Travel requests are now approved in the travel system. This module is kept for reference only.",
                ),
            ),
            source_files=("travel-and-expense-policy.md",),
        ),
    ),
}
