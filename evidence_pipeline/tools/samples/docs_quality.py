"""Quality SOPs of the sample corpus.

SOP-QA-070 and SOP-QA-007 are near twins (IDs that differ only by digit order, the same
sampling-plan caption), so only the document decides their ``exact_id`` questions;
SOP-QC-415 carries footnote markers inside cells and a two-column page.
"""

from __future__ import annotations

from collections.abc import Callable

from evidence_pipeline.tools.samples.spec import Block, Columns, DocSpec, H, P, Q, T, cell_q, references, steps


def _qa_doc(
    doc_id: str,
    revision: str,
    effective: str,
    title: str,
    purpose: str,
    scope: str,
    prep: list[str],
    execution: list[str],
    acceptance_intro: str,
    t1: T,
    sampling: list[list[str]],
    review_months: str,
    chapter: str,
    refs: list[str],
    questions: Callable[[T, T], list[Q]],
) -> DocSpec:
    t2 = T(
        key="T2",
        label="Table 2",
        title="Sampling plan",
        header_rows=[["Batch size (units)", "Sample size (units)", "Retained samples"]],
        body_rows=sampling,
        col_widths=[140, 120, 110],
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(purpose),
        H("2", "Scope"),
        P(scope),
        H("3", "Responsibilities"),
        P(
            "QC analysts perform the testing described here and document results in the laboratory information "
            "management system. The QC supervisor reviews raw data and approves results. Quality Assurance "
            "owns this procedure and approves deviations from it."
        ),
        H("4", "Procedure"),
        H("4.1", "Preparation"),
        *steps(1, prep),
        H("4.2", "Execution"),
        *steps(len(prep) + 1, execution),
        H("5", "Acceptance criteria"),
        P(acceptance_intro),
        t1,
        H("6", "Sampling"),
        P(
            "Samples are drawn at random across the whole filling run, including the beginning, middle and end "
            "of the run, according to the batch size in Table 2."
        ),
        t2,
        H("7", "Review period"),
        P(
            f"This SOP is reviewed every {review_months} or earlier when the referenced compendial chapter {chapter} is revised.",
            key="P/review",
        ),
        H("8", "References"),
        *references(refs),
    ]
    spec = DocSpec(doc_id, title, revision, effective, "Quality Control", "Letter", blocks, [])
    spec.questions = questions(t1, t2)
    return spec


def visual_inspection_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Defect classification for filled vials",
        header_rows=[["Defect", "Class", "AQL (%)"]],
        body_rows=[
            ["Cracked or broken vial", "Critical", "0.010"],
            ["Visible particle in solution", "Critical", "0.065"],
            ["Missing or loose crimp", "Major", "0.40"],
            ["Stopper not fully seated", "Major", "0.65"],
            ["Fill volume visibly low", "Major", "0.15"],
            ["Cosmetic scratch on vial body", "Minor", "1.5"],
            ["Discoloured crimp cap", "Minor", "2.5"],
        ],
        col_widths=[190, 90, 80],
    )

    def questions(t1: T, t2: T) -> list[Q]:
        return [
            cell_q(
                "exact_id",
                t2,
                "3,201 to 10,000",
                "Under SOP-QA-070, how many units are sampled from a batch of 3,201 to 10,000 units?",
                "315",
            ),
            cell_q(
                "exact_id",
                t2,
                "Up to 1,200",
                "Under SOP-QA-070, how many retained samples are kept for a batch of up to 1,200 units?",
                "32",
            ),
            Q("exact_id", "How often is SOP-QA-070 reviewed?", ["every 24 months"], [], "P/review"),
            # "USP <87>" is only in the references list.
            Q("exact_id", "Which USP chapter on biological reactivity is referenced by SOP-QA-070?", ["USP <87>"], [], "H/8"),
            cell_q(
                "table_cell",
                t1,
                "Stopper not fully seated",
                "What AQL applies to a stopper that is not fully seated during visual inspection?",
                "0.65",
            ),
            cell_q("table_cell", t1, "Cracked or broken vial", "What is the AQL for cracked or broken vials?", "0.010"),
            Q("prose", "What light intensity is required at the visual inspection station?", ["2,000 to 3,750 lux"], [], "P/lux"),
        ]

    spec = _qa_doc(
        "SOP-QA-070",
        "3",
        "2023-11-06",
        "Visual Inspection of Filled Vials",
        "This procedure defines the manual visual inspection of filled and crimped vials for visible particles, "
        "container defects and closure defects, and the acceptance sampling that follows 100% inspection.",
        "It applies to all parenteral drug products filled in 2R to 10R glass vials on fill line FL-2. "
        "Automated inspection on the AVI-40 machine is covered by a separate procedure.",
        [
            "Verify that the inspection booth has a matte black and a non-glare white background and that the "
            "inspector holds a current qualification.",
            "Measure the light intensity at the inspection point and record it in the log.",
            "Allow the vials to reach room temperature so that condensation does not mask defects.",
        ],
        [
            "Swirl each vial gently, then hold it against the white background for 5 seconds and against the "
            "black background for 5 seconds.",
            "Reject every vial with a defect listed in Table 1 and place it in the labelled reject tray.",
            "Count the rejects by defect class and record the counts in the batch record.",
            "After 100% inspection, draw an acceptance sample according to Table 2 and inspect it with a second, independent inspector.",
        ],
        "Defects are classified as critical, major or minor. The acceptance quality limit (AQL) for the "
        "acceptance sample is given per defect in Table 1.",
        t1,
        [
            ["Up to 1,200", "125", "32"],
            ["1,201 to 3,200", "200", "48"],
            ["3,201 to 10,000", "315", "64"],
            ["10,001 to 35,000", "500", "96"],
        ],
        "24 months",
        "USP <790>",
        [
            "USP <790> Visible Particulates in Injections.",
            "USP <1790> Visual Inspection of Injections.",
            "USP <87> Biological Reactivity Tests, In Vitro (elastomeric closures).",
        ],
        questions,
    )
    # The light-intensity fact lives in its own paragraph so its page is known.
    i = next(n for n, b in enumerate(spec.blocks) if isinstance(b, H) and b.number == "4.2")
    spec.blocks.insert(
        i,
        P(
            "The light intensity at the inspection point must be in the range 2,000 to 3,750 lux; stop inspection "
            "and call maintenance when the measured value is outside this range.",
            key="P/lux",
        ),
    )
    return spec


def endotoxin_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Endotoxin limits by product",
        header_rows=[["Product", "Route", "Endotoxin limit (EU/mL)", "Maximum valid dilution"]],
        body_rows=[
            ["mRNA-LNP drug product", "Intramuscular", "17.5", "1:350"],
            ["Placebo vehicle", "Intramuscular", "11.2", "1:224"],
            ["Water for injection", "Process water", "0.25", "1:5"],
            ["Formulation buffer", "Process intermediate", "3.6", "1:72"],
        ],
        col_widths=[135, 115, 120, 105],
    )

    def questions(t1: T, t2: T) -> list[Q]:
        return [
            cell_q(
                "exact_id",
                t2,
                "3,201 to 10,000",
                "Under SOP-QA-007, how many units are sampled from a batch of 3,201 to 10,000 units?",
                "19",
            ),
            cell_q(
                "exact_id",
                t2,
                "10,001 to 35,000",
                "Under SOP-QA-007, how many retained samples are kept for a batch of 10,001 to 35,000 units?",
                "58",
            ),
            Q("exact_id", "How often is SOP-QA-007 reviewed?", ["every 36 months"], [], "P/review"),
            Q("exact_id", "Which USP chapter does SOP-QA-007 follow for bacterial endotoxins?", ["USP <85>"], [], "title"),
            cell_q(
                "table_cell", t1, "mRNA-LNP drug product", "What is the endotoxin limit for the mRNA-LNP drug product in EU/mL?", "17.5"
            ),
            cell_q("table_cell", t1, "Placebo vehicle", "What is the maximum valid dilution for the placebo vehicle?", "1:224"),
            Q("prose", "What lysate sensitivity is used for the kinetic chromogenic endotoxin assay?", ["0.05 EU/mL"], [], "P/lambda"),
        ]

    spec = _qa_doc(
        "SOP-QA-007",
        "5",
        "2024-01-22",
        "Endotoxin Testing per USP <85>",
        "This procedure defines the determination of bacterial endotoxins in drug products, process water and "
        "intermediates by the kinetic chromogenic LAL method described in USP <85>.",
        "It applies to release and in-process samples tested in QC microbiology laboratory M-12. Gel-clot "
        "testing for investigations is covered by a separate procedure.",
        [
            "Reconstitute the control standard endotoxin and vortex for at least 15 minutes.",
            "Prepare a standard curve from 5 EU/mL to 0.005 EU/mL in endotoxin-free water.",
            "Dilute each sample within its maximum valid dilution and prepare positive product controls.",
        ],
        [
            "Load standards, samples and controls in duplicate into the microplate and add the reconstituted lysate.",
            "Incubate the plate in the reader at 37 \u00b0C and read the onset time for each well.",
            "Accept the run when the standard curve correlation coefficient is at least 0.980 and the spike "
            "recovery is between 50% and 200%.",
            "Report the endotoxin result of each sample against its limit in Table 1.",
        ],
        "Endotoxin limits are set per product from the maximum dose and the route of administration. The "
        "maximum valid dilution in Table 1 is calculated from the limit and the lysate sensitivity.",
        t1,
        [
            ["Up to 1,200", "7", "14"],
            ["1,201 to 3,200", "13", "26"],
            ["3,201 to 10,000", "19", "38"],
            ["10,001 to 35,000", "29", "58"],
        ],
        "36 months",
        "USP <85>",
        [
            "USP <85> Bacterial Endotoxins Test.",
            "USP <1085> Guidelines on the Endotoxins Test.",
            "Ph. Eur. 2.6.14 Bacterial endotoxins.",
        ],
        questions,
    )
    i = next(n for n, b in enumerate(spec.blocks) if isinstance(b, H) and b.number == "4.2")
    spec.blocks.insert(
        i,
        P(
            "The labelled lysate sensitivity (lambda) used for all calculations in this procedure is "
            "0.05 EU/mL; a new lysate lot is qualified before use.",
            key="P/lambda",
        ),
    )
    return spec


def toc_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Swab recovery factors by surface",
        header_rows=[["Surface", "Material", "Recovery (%)", "Correction factor"]],
        body_rows=[
            ["Vessel wall", "316L stainless steel\u00b9", "88.6", "1.13"],
            ["Mixing impeller", "316L stainless steel\u00b9", "81.9", "1.22"],
            ["Sight glass", "Borosilicate glass", "93.7", "1.07"],
            ["Gasket", "EPDM", "64.2\u00b2", "1.56"],
            ["Transfer tubing", "Platinum-cured silicone", "58.8\u00b2", "1.70"],
        ],
        footnotes=[
            ("\u00b9", "Electropolished coupons, 25 cm2 swab area."),
            ("\u00b2", "Recovery below 70% requires a correction factor approved by QA."),
        ],
        col_widths=[110, 150, 85, 100],
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure describes the verification of equipment cleaning by swab sampling and total organic "
            "carbon (TOC) analysis after manual and clean-in-place cleaning of product-contact surfaces."
        ),
        H("2", "Scope"),
        P(
            "It applies to formulation vessels, mixing equipment and transfer lines in suites B2 and C4 after "
            "product changeover. Rinse sampling of closed piping is covered by a separate procedure."
        ),
        Columns(
            [
                H("3", "Background"),
                P(
                    "Total organic carbon is a non-specific measure of residues of product, excipients and "
                    "cleaning agents. Because it responds to any carbon-containing residue, a TOC result is "
                    "compared with a limit calculated from the most toxic and least soluble product made on the "
                    "equipment. Recovery from each surface material is determined in a recovery study with "
                    "spiked coupons, and the measured swab result is corrected with the recovery factor of the "
                    "sampled surface."
                ),
                P(
                    "Swab locations are chosen where residues are most likely to remain: below the impeller, "
                    "on gasket seats, around the sight glass and at the low point of transfer tubing. The "
                    "locations are fixed in the equipment sampling map and are not changed without a change "
                    "control."
                ),
                H("4", "Swab technique"),
                P(
                    "Moisten a low-TOC swab with TOC-grade water and press out excess liquid against the inside "
                    "of the vial. Swab a 25 cm2 area with ten horizontal strokes, turn the swab and repeat with "
                    "ten vertical strokes. Place the swab head in a pre-cleaned vial with 20 mL of TOC-grade "
                    "water and cap the vial immediately."
                ),
                P(
                    "Take one blank swab per sampling session and treat it like the samples. Analyse the "
                    "samples within 24 hours of sampling and keep them at room temperature until analysis."
                ),
            ]
        ),
        H("5", "Recovery factors"),
        P("Multiply each swab result by the correction factor of the sampled surface before comparing it with the acceptance limit."),
        t1,
        H("6", "Acceptance criteria"),
        P(
            "The corrected TOC result of every swab must not exceed 490 ppb carbon. The blank swab must read "
            "below 60 ppb carbon; otherwise the sampling session is repeated.",
            key="P/limit",
        ),
        P(
            "A failing result requires recleaning and resampling of the equipment; three consecutive failures "
            "on the same item open an investigation.",
            key="P/failure",
        ),
        H("7", "References"),
        *references(["USP <643> Total Organic Carbon.", "PDA Technical Report No. 29, Points to Consider for Cleaning Validation."]),
    ]
    questions = [
        cell_q("table_cell", t1, "Gasket", "What is the swab recovery from EPDM gaskets?", "64.2\u00b2"),
        cell_q("table_cell", t1, "Mixing impeller", "What correction factor applies to swabs from the mixing impeller?", "1.22"),
        Q(
            "footnote",
            "What is required when swab recovery is below 70%?",
            ["a correction factor approved by QA"],
            [t1.caption],
            "T1/fn/\u00b2",
        ),
        Q("footnote", "What swab area were the stainless steel recovery coupons?", ["25 cm2 swab area"], [t1.caption], "T1/fn/\u00b9"),
        Q("prose", "What is the TOC acceptance limit for a corrected swab result?", ["490 ppb carbon"], [], "P/limit"),
        Q("prose", "How many consecutive cleaning failures open an investigation?", ["three consecutive failures"], [], "P/failure"),
    ]
    return DocSpec(
        "SOP-QC-415", "Cleaning Verification by TOC Swab Sampling", "2", "2024-05-13", "Quality Control", "A4", blocks, questions
    )
