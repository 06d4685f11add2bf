"""Manufacturing and engineering SOPs of the sample corpus.

SOP-8812 (a warning paragraph that governs a two-level ruled table, footnote markers, a figure
caption that is not a table caption), SOP-ENG-114 (a 60-row table crossing a page break, a borderless
table captioned below) and SOP-MFG-231 (two same-shaped tables told apart only by caption).
"""

from __future__ import annotations

from evidence_pipeline.tools.samples.spec import Block, DocSpec, Fig, H, P, Q, T, cell_q, references, steps


def lnp_doc() -> DocSpec:
    warning = P(
        "If processing lipid nanoparticles, confirm the cooling jacket is active before starting the pumps.",
        lead="WARNING:",
        style="warning",
    )
    t1 = T(
        key="T1",
        label="Table 1",
        title="Pump flow rate limits",
        header_rows=[
            ["Stream", "Flow rate (mL/min)", "Flow rate (mL/min)", "Pressure (bar)", "Pressure (bar)"],
            ["", "Min", "Max", "Min", "Max"],
        ],
        spans=[(0, 1, 1, 2), (0, 3, 1, 2)],
        body_rows=[
            ["Aqueous Phase 1", "0.6", "1.8", "0.35", "2.4*"],
            ["Aqueous Phase 2", "0.75", "2.25", "0.41", "2.65*"],
            ["Lipid (ethanol) phase", "0.26", "0.84", "0.29", "1.95\u2020"],
            ["Dilution buffer", "1.35", "4.05", "0.52", "3.1"],
        ],
        footnotes=[
            ("*", "Only with the high-pressure manifold installed."),
            ("\u2020", "Read at pressure transducer PT-104 on the ethanol line."),
        ],
        col_widths=[130, 62, 62, 62, 62],
    )
    t2 = T(
        key="T2",
        label="Table 2",
        title="Release specifications for LNP drug substance",
        header_rows=[["Attribute", "Method", "Acceptance criterion"]],
        body_rows=[
            ["Particle size (Z-average)", "Dynamic light scattering", "70-110 nm"],
            ["Polydispersity index", "Dynamic light scattering", "NMT 0.19"],
            ["Encapsulation efficiency", "RiboGreen assay", "NLT 91%"],
            ["mRNA content", "RiboGreen assay", "0.093-0.127 mg/mL"],
            ["Residual ethanol", "GC-FID", "NMT 470 ppm"],
            ["Bacterial endotoxin", "Kinetic LAL", "NMT 8.4 EU/mL"],
            ["pH", "Potentiometry", "7.1-7.7"],
        ],
    )
    cooling = "confirm the cooling jacket is active"
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure describes the formulation of lipid nanoparticles (LNP) that encapsulate messenger "
            "RNA by microfluidic mixing of an ethanolic lipid solution with an acidic aqueous mRNA solution, "
            "followed by in-line dilution and transfer to tangential flow filtration. It defines the critical "
            "process parameters of the mixing step and the release specifications of the drug substance."
        ),
        H("2", "Scope"),
        P(
            "This SOP applies to the microfluidic mixing skid MX-300 in suite B2 of the clinical manufacturing "
            "facility and covers batches from 0.5 L to 12 L of formulated drug substance. Development-scale "
            "mixing on benchtop cartridges is out of scope and is described in SOP-8815.",
            key="P/scope",
        ),
        H("3", "Responsibilities"),
        P(
            "Manufacturing operators execute the procedure and record every parameter in the electronic batch "
            "record. The shift supervisor verifies the calibration status of the pumps and pressure transducers "
            "before each campaign. Quality Assurance reviews the completed batch record within 5 working days "
            "of batch completion.",
            key="P/resp",
        ),
        H("4", "Procedure"),
        H("4.1", "Preparation of solutions"),
        *steps(
            1,
            [
                "Dissolve the ionizable lipid, DSPC, cholesterol and PEG-lipid in absolute ethanol at a molar "
                "ratio of 50:10:38.5:1.5 to a total lipid concentration of 12.5 mM.",
                "Dilute the mRNA drug substance in 25 mM sodium acetate buffer, pH 4.0, to a concentration of 0.174 mg/mL.",
                "Filter both solutions through a 0.2 \u00b5m polyethersulfone filter into the feed vessels.",
                "Equilibrate both feed vessels at 18 \u00b1 2 \u00b0C for at least 40 minutes before mixing.",
            ],
        ),
        H("4.2", "Critical process parameters"),
        P(
            "The pump flow rates and line pressures below are critical process parameters. Operate within "
            "these limits throughout mixing and record any excursion as a deviation. The flow rate ratio of "
            "aqueous to ethanol phase is held at 3:1 for all batch sizes."
        ),
        warning,
        t1,
        H("4.3", "Mixing and in-line dilution"),
        *steps(
            5,
            [
                "Prime both pump lines with their solutions and discard the first 35 mL of mixed output to waste.",
                "Start the aqueous and ethanol pumps simultaneously from the skid controller and collect the "
                "mixed stream after the priming volume.",
                "Dilute the mixed stream in-line with dilution buffer to reduce the ethanol content before "
                "collection. Figure 1 shows the arrangement of feeds, mixer and dilution point.",
            ],
        ),
        Fig("F1", "Figure 1: Mixer schematic"),
        P(
            "Collect the diluted LNP suspension in a single-use bag and start tangential flow filtration "
            "within 45 minutes of mixing. Record the start and end time of collection in the batch record.",
            key="P/tff",
        ),
        H("5", "Acceptance criteria"),
        P(
            "The formulated drug substance is released against the specifications in Table 2. Results outside "
            "these limits are handled under the out-of-specification procedure and the batch is placed on hold."
        ),
        t2,
        H("6", "Storage"),
        P(
            "Store the filled drug substance bags at -60 \u00b0C or below. The maximum storage period before "
            "fill and finish is 9 months from the date of formulation.",
            key="P/storage",
        ),
        H("7", "References"),
        *references(
            [
                "SOP-8815 Benchtop LNP formulation for development batches.",
                "SOP-ENG-114 Calibration of process instruments.",
                "ICH Q8(R2) Pharmaceutical development.",
            ]
        ),
    ]
    questions = [
        cell_q(
            "table_cell",
            t1,
            "Aqueous Phase 1",
            "What is the maximum flow rate of Aqueous Phase 1 in mL/min during LNP mixing?",
            "1.8",
            [cooling],
        ),
        cell_q("table_cell", t1, "Dilution buffer", "What is the minimum line pressure for the dilution buffer stream?", "0.52", [cooling]),
        cell_q(
            "table_cell", t1, "Lipid (ethanol) phase", "What maximum flow rate is allowed for the lipid (ethanol) phase?", "0.84", [cooling]
        ),
        cell_q(
            "table_cell",
            t1,
            "Aqueous Phase 2",
            "What is the maximum pressure for Aqueous Phase 2 on the microfluidic skid?",
            "2.65*",
            [cooling],
        ),
        Q(
            "footnote",
            "When does the 2.4 bar pressure limit for Aqueous Phase 1 apply?",
            ["Only with the high-pressure manifold installed."],
            [t1.caption],
            "T1/fn/*",
        ),
        Q("footnote", "At which pressure transducer is the ethanol line pressure read?", ["PT-104"], [t1.caption], "T1/fn/\u2020"),
        cell_q(
            "table_cell",
            t2,
            "Encapsulation efficiency",
            "What is the acceptance criterion for encapsulation efficiency of the LNP drug substance?",
            "NLT 91%",
        ),
        cell_q("table_cell", t2, "Residual ethanol", "What is the residual ethanol limit for the LNP drug substance?", "NMT 470 ppm"),
        cell_q(
            "table_cell",
            t2,
            "Polydispersity index",
            "What polydispersity index is acceptable for release of the LNP drug substance?",
            "NMT 0.19",
        ),
        Q("prose", "What batch sizes does the microfluidic mixing SOP cover?", ["0.5 L to 12 L"], [], "P/scope"),
        Q("prose", "Within how many working days does QA review the LNP batch record?", ["5 working days"], [], "P/resp"),
        Q("prose", "How soon after mixing must tangential flow filtration of the LNP suspension start?", ["45 minutes"], [], "P/tff"),
        Q("prose", "What is the maximum storage period of the LNP drug substance before fill and finish?", ["9 months"], [], "P/storage"),
        Q("prose", "What molar ratio of ionizable lipid, DSPC, cholesterol and PEG-lipid is used?", ["50:10:38.5:1.5"], [], "H/4.1"),
    ]
    return DocSpec(
        "SOP-8812",
        "Lipid Nanoparticle Formulation by Microfluidic Mixing",
        "2",
        "2024-02-12",
        "Drug Substance Manufacturing",
        "A4",
        blocks,
        questions,
    )


_INSTRUMENTS = [
    ("TT", "Temperature transmitter", ["-20 to 150 \u00b0C", "0 to 100 \u00b0C", "-80 to 40 \u00b0C"], "\u00b0C", 12),
    ("PT", "Pressure transmitter", ["0 to 6 bar", "0 to 10 bar", "-1 to 4 bar"], "bar", 12),
    ("FT", "Flow meter", ["0 to 20 L/min", "0 to 250 L/h", "0 to 5 L/min"], "%", 24),
    ("LT", "Level transmitter", ["0 to 500 L", "0 to 2000 L", "0 to 200 L"], "% span", 24),
    ("AT", "pH probe", ["2 to 12 pH", "0 to 14 pH", "4 to 10 pH"], "pH", 3),
    ("CT", "Conductivity sensor", ["0 to 200 mS/cm", "0 to 20 mS/cm", "0 to 2 mS/cm"], "mS/cm", 6),
    ("WT", "Weighing scale", ["0 to 60 kg", "0 to 600 kg", "0 to 6 kg"], "kg", 12),
]
_LOCATIONS = ["Suite B2 mixing skid", "Suite B2 TFF skid", "Buffer prep C1", "WFI loop", "Cold room CR-03", "Fill line FL-2"]


def _calibration_rows(n: int = 60) -> list[list[str]]:
    rows = []
    for i in range(n):
        prefix, kind, ranges, unit, interval = _INSTRUMENTS[i % len(_INSTRUMENTS)]
        tag = f"{prefix}-{1101 + 19 * i}"
        # 37 is coprime to 89 and i < 89, so every row's tolerance value is distinct;
        # three decimals keep them apart from the two-decimal values of the other documents.
        tol = (i * 37 % 89 + 11) / 1000
        rows.append([tag, kind, _LOCATIONS[(i * 5) % len(_LOCATIONS)], ranges[i % 3], f"\u00b1{tol:.3f} {unit}", str(interval)])
    return rows


def calibration_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Calibration status labels",
        header_rows=[["Label colour", "Status", "Meaning"]],
        body_rows=[
            ["Green", "Calibrated", "Within tolerance; use permitted until the due date on the label."],
            ["Yellow", "Limited use", "Usable only in the range written on the label."],
            ["Red", "Out of service", "Out of tolerance or overdue; must not be used."],
            ["Blue", "No calibration required", "Indicator only; not used for GMP decisions."],
        ],
        col_widths=[80, 120, 250],
        wrap_cols=frozenset({2}),
    )
    rows = _calibration_rows()
    t2 = T(
        key="T2",
        label="Table 2",
        title="Calibration intervals for process instruments",
        header_rows=[["Tag", "Instrument", "Location", "Range", "Tolerance", "Interval (months)"]],
        body_rows=rows,
        col_widths=[45, 107, 92, 74, 66, 84],
        keep_together=False,
        compact=True,
    )
    t3 = T(
        key="T3",
        label="Table 3",
        separator=" \u2013 ",
        title="Buffer compositions",
        header_rows=[["Buffer", "pH at 25 \u00b0C", "Composition", "Use after opening"]],
        body_rows=[
            ["Phthalate buffer", "4.005", "10.12 g/L potassium hydrogen phthalate", "8 weeks"],
            ["Phosphate buffer", "6.865", "3.39 g/L KH2PO4 + 3.53 g/L Na2HPO4", "6 weeks"],
            ["Borate buffer", "9.180", "3.80 g/L sodium tetraborate decahydrate", "4 weeks"],
            ["Carbonate buffer", "10.012", "2.09 g/L NaHCO3 + 2.64 g/L Na2CO3", "2 weeks"],
        ],
        caption_position="below",
        ruled=False,
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure defines how process instruments that measure GMP-relevant parameters are calibrated, "
            "labelled and released for use, and at what intervals they are recalibrated."
        ),
        H("2", "Scope"),
        P(
            "It applies to temperature, pressure, flow, level, pH, conductivity and weighing instruments on "
            "manufacturing equipment, utilities and cold rooms. Laboratory balances and analytical instruments "
            "are calibrated under the QC equipment program."
        ),
        H("3", "Responsibilities"),
        P(
            "Metrology technicians perform calibrations against reference standards traceable to national "
            "standards. The engineering planner schedules calibrations in the maintenance system so that no "
            "instrument becomes overdue. Quality Assurance approves the assessment of out-of-tolerance results."
        ),
        P(
            "System owners make instruments available on the scheduled date and confirm after calibration that "
            "the instrument has been returned to service with a valid label."
        ),
        H("3.1", "Definitions"),
        P("The reading of the instrument before any adjustment, compared with the reference standard.", lead="As-found:"),
        P("The reading of the instrument after adjustment, when an adjustment was needed.", lead="As-left:"),
        P(
            "A standard of higher accuracy, with a valid certificate, against which the instrument is compared. "
            "Its uncertainty is at most one quarter of the tolerance of the instrument.",
            lead="Reference standard:",
        ),
        P(
            "The maximum time between two calibrations. The due date is the calibration date plus the interval.",
            lead="Calibration interval:",
        ),
        H("4", "Calibration status labels"),
        P(
            "Every calibrated instrument carries a status label that shows the tag, the calibration date and "
            "the due date. The label colour tells the user whether the instrument may be used."
        ),
        t1,
        H("5", "Calibration intervals"),
        P(
            "Initial intervals follow the criticality of the measured parameter and the stability history of "
            "the instrument type. Intervals may be extended after three consecutive as-found results within "
            "tolerance, with engineering and QA approval."
        ),
        P("The tolerance is the maximum permitted as-found error. Instruments found outside it are handled as described in section 7."),
        t2,
        H("6", "Calibration of pH probes"),
        *steps(
            1,
            [
                "Rinse the probe with purified water and blot it dry with a lint-free tissue.",
                "Calibrate at three points using the phthalate, phosphate and borate buffers, in that order.",
                "Check the slope; it must be between 95% and 102% of the theoretical Nernst slope.",
            ],
        ),
        P(
            "Use the certified reference buffers listed below. Record the lot number and the opening date on "
            "each bottle and discard it after the period shown."
        ),
        t3,
        H("7", "Out-of-tolerance results"),
        P(
            "When an instrument is found outside its tolerance, label it red, notify the system owner and report "
            "the result to Quality Assurance within 2 working days. The system owner assesses the impact on "
            "every batch processed since the last passing calibration.",
            key="P/oot",
        ),
        P(
            "Instruments overdue by more than 14 days are tagged out of service until they have been recalibrated.",
            key="P/overdue",
        ),
        H("8", "References"),
        *references(["SOP-QA-070 Visual inspection of filled vials.", "ISPE Good Practice Guide: Calibration Management."]),
    ]
    long_tail_rows = [48, 51, 54, 57, 59]  # all on the continuation page
    questions = [
        Q(
            "long_tail",
            f"What is the calibration tolerance of {rows[i][1].lower()} {rows[i][0]}?",
            [rows[i][4]],
            [t2.caption],
            f"T2/row/{rows[i][0]}",
        )
        for i in long_tail_rows
    ]
    questions += [
        cell_q("table_cell", t3, "Carbonate buffer", "What is the pH of the carbonate calibration buffer at 25 \u00b0C?", "10.012"),
        cell_q("table_cell", t3, "Borate buffer", "How long may the borate buffer be used after opening?", "4 weeks"),
        cell_q(
            "table_cell",
            t3,
            "Phthalate buffer",
            "What is the composition of the phthalate pH buffer?",
            "10.12 g/L potassium hydrogen phthalate",
        ),
        cell_q("table_cell", t1, "Yellow", "What status does a yellow calibration label indicate?", "Limited use"),
        Q(
            "prose",
            "Within how many working days must an out-of-tolerance calibration result be reported to QA?",
            ["2 working days"],
            [],
            "P/oot",
        ),
        Q("prose", "After how many days overdue is an instrument tagged out of service?", ["14 days"], [], "P/overdue"),
    ]
    return DocSpec("SOP-ENG-114", "Calibration of Process Instruments", "4", "2023-09-04", "Engineering", "A4", blocks, questions)


def hold_time_doc() -> DocSpec:
    header = [["Intermediate", "Container", "Maximum hold (h)", "Bioburden limit (CFU/10 mL)"]]
    items = [
        ("Clarified harvest", "Single-use bag"),
        ("Protein A eluate", "Single-use bag"),
        ("Viral inactivation pool", "Stainless steel tank"),
        ("UF/DF retentate", "Stainless steel tank"),
        ("Formulated bulk", "PETG bottle"),
    ]
    cold = [("97", "14"), ("73", "9"), ("53", "6"), ("121", "23"), ("167", "3")]
    warm = [("11", "46"), ("17", "39"), ("21", "27"), ("29", "52"), ("31", "2")]
    widths = [140, 120, 100, 150]
    t1 = T(
        key="T1",
        label="Table 1",
        title="Hold times at 2\u20138 \u00b0C",
        header_rows=header,
        body_rows=[[n, c, h, b] for (n, c), (h, b) in zip(items, cold)],
        col_widths=widths,
    )
    t2 = T(
        key="T2",
        label="Table 2",
        title="Hold times at 25 \u00b0C",
        header_rows=header,
        body_rows=[[n, c, h, b] for (n, c), (h, b) in zip(items, warm)],
        col_widths=widths,
    )
    caution = P(
        "Intermediates held at 25 \u00b0C must be protected from light and processed within the same shift.",
        lead="CAUTION:",
        style="warning",
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure sets the maximum hold times and bioburden limits for process intermediates of the "
            "monoclonal antibody purification process, at refrigerated and at room temperature."
        ),
        H("2", "Scope"),
        P(
            "It applies to intermediates from clarified harvest to formulated bulk produced in the purification "
            "suites P1 and P2. Hold times for cell culture media and buffers are defined in their own "
            "specifications."
        ),
        H("3", "Definitions"),
        P(
            "Hold time is the period from the end of one process step to the start of the next. Bioburden is the "
            "number of colony-forming units (CFU) recovered from a 10 mL sample."
        ),
        P(
            "Hold times start when the last container of the step has been filled and end when the next step starts drawing from it.",
            key="P/start",
        ),
        H("4", "Hold time limits"),
        H("4.1", "Refrigerated storage"),
        P(
            "The limits below apply to intermediates stored at 2\u20138 \u00b0C in a monitored cold room. Samples "
            "for bioburden are taken at the end of the hold."
        ),
        t1,
        H("4.2", "Room temperature storage"),
        P("Room-temperature holds are permitted only when a refrigerated hold is not possible, for example during equipment changeover."),
        caution,
        t2,
        H("5", "Extension of hold times"),
        P(
            "A hold time may be extended once by up to 12 hours with QA approval, provided the bioburden "
            "result at the end of the extended hold meets the limit. Repeated extensions require a deviation.",
            key="P/extension",
        ),
        P(
            "Hold time studies supporting these limits are repeated every 3 years or after a process change.",
            key="P/studies",
        ),
        H("6", "References"),
        *references(["PDA Technical Report No. 66.", "SOP-8812 Lipid nanoparticle formulation by microfluidic mixing."]),
    ]
    protect = "must be protected from light"
    questions = [
        cell_q("similar", t2, "Protein A eluate", "What is the maximum hold time for Protein A eluate at 25 \u00b0C?", "17"),
        cell_q("similar", t1, "Protein A eluate", "What is the maximum hold time for Protein A eluate at 2\u20138 \u00b0C?", "73"),
        cell_q(
            "similar", t1, "UF/DF retentate", "What bioburden limit applies to UF/DF retentate held refrigerated at 2\u20138 \u00b0C?", "23"
        ),
        cell_q("similar", t2, "UF/DF retentate", "What bioburden limit applies to UF/DF retentate held at 25 \u00b0C?", "52"),
        cell_q("similar", t1, "Clarified harvest", "How long can clarified harvest be held at 2\u20138 \u00b0C?", "97"),
        cell_q(
            "table_cell", t2, "Clarified harvest", "What is the room-temperature bioburden limit for clarified harvest?", "46", [protect]
        ),
        Q("prose", "By how much may an intermediate hold time be extended with QA approval?", ["12 hours"], [], "P/extension"),
        Q("prose", "How often are hold time studies repeated?", ["every 3 years"], [], "P/studies"),
    ]
    return DocSpec(
        "SOP-MFG-231", "Hold Time Limits for Process Intermediates", "1", "2024-04-29", "Downstream Processing", "Letter", blocks, questions
    )
