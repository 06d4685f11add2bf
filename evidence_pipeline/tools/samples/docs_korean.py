"""Korean SOPs of the sample corpus: the same table cases as the English set, in Korean.

SOP-KR-101 (a warning that governs a two-level ruled table, footnote markers), SOP-KR-205 (a
sampling-point table with units and a long listing), SOP-KR-318 (two same-shaped tables told
apart only by caption). Headings, captions, row labels, warnings and questions are Korean;
units, identifiers and numbers stay as Korean SOPs print them (mL/min, °C, SOP-KR-101).
Questions use the particles a Korean reader types ("유량은", "온도는"), so BM25 must match
an eojeol to its stem.
"""

from __future__ import annotations

from evidence_pipeline.tools.samples.spec import KOREAN, Block, DocSpec, H, P, Q, T, cell_q, steps


def _doc(doc_id: str, title: str, revision: str, effective: str, owner: str, blocks: list[Block], questions: list[Q]) -> DocSpec:
    return DocSpec(doc_id, title, revision, effective, owner, "A4", blocks, questions, script="hangul", labels=KOREAN)


def korean_lnp_doc() -> DocSpec:
    warning = P("지질 나노입자를 제조하는 경우, 펌프를 가동하기 전에 냉각 재킷이 작동 중인지 확인한다.", lead="경고:", style="warning")
    t1 = T(
        key="T1",
        label="표 1",
        title="펌프 유량 한계",
        header_rows=[
            ["공정 흐름", "유량 (mL/min)", "유량 (mL/min)", "압력 (bar)", "압력 (bar)"],
            ["", "최소", "최대", "최소", "최대"],
        ],
        spans=[(0, 1, 1, 2), (0, 3, 1, 2)],
        body_rows=[
            ["수상 1", "0.6", "1.8", "0.35", "2.4*"],
            ["수상 2", "0.75", "2.25", "0.41", "2.65*"],
            ["지질 (에탄올) 상", "0.26", "0.84", "0.29", "1.95\u2020"],
            ["희석 완충액", "1.35", "4.05", "0.52", "3.1"],
        ],
        footnotes=[
            ("*", "고압 매니폴드가 설치된 경우에만 적용한다."),
            ("\u2020", "에탄올 라인의 압력 전송기 PT-104에서 측정한다."),
        ],
        col_widths=[130, 62, 62, 62, 62],
    )
    t2 = T(
        key="T2",
        label="표 2",
        title="LNP 원료의약품 출하 규격",
        header_rows=[["시험 항목", "시험 방법", "허용 기준"]],
        body_rows=[
            ["입자 크기 (Z-평균)", "동적 광산란법", "70-110 nm"],
            ["다분산 지수", "동적 광산란법", "0.19 이하"],
            ["봉입 효율", "RiboGreen 분석법", "91% 이상"],
            ["mRNA 함량", "RiboGreen 분석법", "0.093-0.127 mg/mL"],
            ["잔류 에탄올", "GC-FID", "470 ppm 이하"],
            ["세균 내독소", "LAL 동적 비색법", "8.4 EU/mL 이하"],
        ],
        col_widths=[150, 150, 150],
    )
    cooling = "냉각 재킷이 작동 중인지 확인한다"
    blocks: list[Block] = [
        H("1", "목적"),
        P(
            "이 절차는 에탄올 지질 용액과 산성 mRNA 수용액을 미세유체 혼합하여 메신저 RNA를 봉입하는 지질 "
            "나노입자(LNP)의 제형화 방법을 규정한다. 혼합 단계의 핵심 공정 변수와 원료의약품의 출하 규격을 정한다."
        ),
        H("2", "적용 범위"),
        P(
            "이 SOP는 임상 제조 시설 B2 구역의 미세유체 혼합 장치 MX-300에 적용되며, 제형화된 원료의약품 "
            "0.5 L에서 12 L까지의 배치를 대상으로 한다.",
            key="P/scope",
        ),
        H("3", "책임"),
        P(
            "제조 작업자는 절차를 수행하고 모든 변수를 전자 배치 기록서에 기록한다. 품질보증 부서는 배치 "
            "완료 후 영업일 기준 5일 이내에 완료된 배치 기록서를 검토한다.",
            key="P/resp",
        ),
        H("4", "절차"),
        *steps(
            1,
            [
                "지질 원액을 무수 에탄올에 녹여 총 지질 농도 12.5 mM로 조제한다.",
                "mRNA를 pH 4.0 구연산 완충액에 희석하여 0.2 mg/mL로 맞춘다.",
                "혼합 카트리지를 장착하고 시스템을 주사용수로 3회 세척한다.",
            ],
            KOREAN,
        ),
        H("4.1", "혼합 공정 변수"),
        warning,
        t1,
        H("5", "출하 시험"),
        P("원료의약품은 표 2의 모든 규격에 적합해야 출하할 수 있다.", key="P/release"),
        t2,
        H("6", "기록 보관"),
        P(
            "배치 기록서와 시험 성적서는 제품 유효기간 만료 후 최소 7년간 문서 보관실에 보관한다.",
            key="P/records",
        ),
    ]
    questions = [
        cell_q("table_cell", t1, "수상 1", "LNP 혼합 시 수상 1의 최대 유량은 몇 mL/min인가?", "1.8", [cooling]),
        cell_q("table_cell", t1, "희석 완충액", "희석 완충액 흐름의 최소 압력은 얼마인가?", "0.52", [cooling]),
        cell_q("table_cell", t1, "지질 (에탄올) 상", "지질 (에탄올) 상에 허용되는 최대 유량은?", "0.84", [cooling]),
        cell_q("footnote", t1, "수상 1", "수상 1의 최대 압력 2.4 bar는 어떤 조건에서만 적용되는가?", "고압 매니폴드가 설치된 경우에만"),
        cell_q("footnote", t1, "지질 (에탄올) 상", "에탄올 라인의 압력은 어느 압력 전송기에서 측정하는가?", "PT-104"),
        cell_q("table_cell", t2, "봉입 효율", "LNP 원료의약품의 봉입 효율 허용 기준은?", "91% 이상"),
        cell_q("table_cell", t2, "잔류 에탄올", "SOP-KR-101에서 잔류 에탄올의 허용 한도는 얼마인가?", "470 ppm 이하"),
        cell_q("table_cell", t2, "입자 크기 (Z-평균)", "입자 크기(Z-평균)의 출하 기준 범위는?", "70-110 nm"),
        Q("prose", "완료된 배치 기록서는 며칠 이내에 검토해야 하는가?", ["5일 이내"], [], "P/resp"),
        Q("prose", "배치 기록서와 시험 성적서의 보관 기간은?", ["최소 7년간"], [], "P/records"),
    ]
    return _doc("SOP-KR-101", "지질 나노입자 제형화", "3.0", "2024-03-18", "제조기술팀", blocks, questions)


def korean_water_doc() -> DocSpec:
    # point, place, TOC (ppb), conductivity (μS/cm), sampling frequency
    rows = [
        ["PW-01", "생산동 1층 저장 탱크 출구", "500", "1.3", "매일"],
        ["PW-02", "생산동 1층 루프 복귀 라인", "475", "1.4", "주 1회"],
        ["PW-03", "조제실 A 사용처", "450", "1.5", "매일"],
        ["PW-04", "조제실 B 사용처", "425", "1.3", "주 1회"],
        ["PW-05", "세척실 사용처", "400", "1.4", "매일"],
        ["PW-06", "품질관리 실험실 사용처", "375", "1.5", "주 1회"],
        ["PW-07", "충전실 전실 사용처", "350", "1.3", "매일"],
        ["PW-08", "원료 칭량실 사용처", "325", "1.4", "주 1회"],
        ["WFI-01", "증류기 출구", "250", "1.1", "매일"],
        ["WFI-02", "주사용수 저장 탱크 출구", "240", "1.0", "매일"],
        ["WFI-03", "충전실 사용처", "230", "1.2", "매일"],
        ["WFI-04", "주사용수 루프 복귀 라인", "220", "0.9", "주 1회"],
    ]
    t1 = T(
        key="T1",
        label="표 1",
        title="정제수 및 주사용수 채취 지점별 관리 기준",
        header_rows=[["채취 지점", "위치", "TOC (ppb)", "전도도 (μS/cm)", "채취 주기"]],
        body_rows=rows,
        col_widths=[60, 170, 65, 80, 70],
        keep_together=False,
    )
    t2 = T(
        key="T2",
        label="표 2",
        title="미생물 경고 기준 및 조치 기준",
        header_rows=[["수질 등급", "경고 기준 (CFU/100 mL)", "조치 기준 (CFU/100 mL)"]],
        body_rows=[
            ["정제수", "50", "100"],
            ["주사용수", "5", "10"],
            ["순수 증기 응축수", "5", "10"],
        ],
        footnotes=[("*", "조치 기준을 초과하면 24시간 이내에 일탈 보고서를 작성한다.")],
        col_widths=[150, 150, 150],
    )
    blocks: list[Block] = [
        H("1", "목적"),
        P("이 절차는 정제수(PW) 및 주사용수(WFI) 시스템의 정기 모니터링 방법과 채취 지점별 관리 기준을 규정한다."),
        H("2", "적용 범위"),
        P("이 SOP는 생산동의 정제수 루프와 주사용수 루프의 모든 채취 지점에 적용된다.", key="P/scope"),
        H("3", "시료 채취"),
        P(
            "시료는 채취 전에 사용처 밸브를 최소 30초간 흘려보낸 후 멸균 용기에 채취한다. TOC 시료는 채취 후 4시간 이내에 분석한다.",
            key="P/sampling",
        ),
        H("4", "관리 기준"),
        P("각 채취 지점의 이화학적 관리 기준과 채취 주기는 표 1과 같다."),
        t1,
        H("5", "미생물 모니터링"),
        P("미생물 시료는 R2A 한천 배지에서 30-35 °C로 5일간 배양한다.", key="P/micro"),
        t2,
        H("6", "일탈 처리"),
        P(
            "경고 기준을 2회 연속 초과하면 시스템 담당자가 원인을 조사하고 재채취한다. 조치 기준 초과 시 해당 루프의 사용을 중지한다.",
            key="P/deviation",
        ),
    ]
    questions = [
        cell_q("table_cell", t1, "PW-03", "조제실 A 사용처(PW-03)의 TOC 관리 기준은 몇 ppb인가?", "450"),
        cell_q("table_cell", t1, "WFI-02", "주사용수 저장 탱크 출구의 TOC 기준은?", "240"),
        cell_q("long_tail", t1, "WFI-04", "주사용수 루프 복귀 라인의 전도도 기준은 얼마인가?", "0.9"),
        cell_q("long_tail", t1, "PW-08", "원료 칭량실 사용처의 시료 채취 주기는?", "주 1회"),
        cell_q("similar", t2, "주사용수", "주사용수의 미생물 조치 기준은 몇 CFU/100 mL인가?", "10"),
        cell_q("similar", t2, "정제수", "정제수의 미생물 경고 기준은?", "50"),
        cell_q("footnote", t2, "정제수", "미생물 조치 기준을 초과하면 언제까지 일탈 보고서를 작성해야 하는가?", "24시간 이내에"),
        Q("prose", "TOC 시료는 채취 후 몇 시간 이내에 분석해야 하는가?", ["4시간 이내에"], [], "P/sampling"),
        Q("prose", "미생물 시료의 배양 온도와 기간은?", ["30-35 °C로 5일간"], [], "P/micro"),
    ]
    return _doc("SOP-KR-205", "정제수 시스템 모니터링", "5.1", "2023-11-02", "품질관리팀", blocks, questions)


def korean_sterilization_doc() -> DocSpec:
    head = [["변수", "설정값", "허용 범위"]]
    liquid = T(
        key="T1",
        label="표 1",
        title="액체 부하 멸균 사이클 변수",
        header_rows=head,
        body_rows=[
            ["멸균 온도", "121 °C", "121-124 °C"],
            ["유지 시간", "30분", "30-35분"],
            ["챔버 압력", "2.1 bar", "2.0-2.3 bar"],
            ["냉각 종료 온도", "80 °C", "80 °C 이하"],
        ],
        col_widths=[150, 150, 150],
    )
    porous = T(
        key="T2",
        label="표 2",
        title="다공성 부하 멸균 사이클 변수",
        header_rows=head,
        body_rows=[
            ["멸균 온도", "134 °C", "134-137 °C"],
            ["유지 시간", "4분", "4-5분"],
            ["챔버 압력", "3.1 bar", "3.0-3.3 bar"],
            ["건조 시간", "20분", "20분 이상"],
        ],
        col_widths=[150, 150, 150],
    )
    bi = T(
        key="T3",
        label="표 3",
        title="생물학적 지표 배치 위치",
        header_rows=[["부하 유형", "지표 수", "배치 위치"]],
        body_rows=[
            ["액체 부하", "10", "가장 큰 용기의 중심부"],
            ["다공성 부하", "12", "가운 묶음의 중앙층"],
            ["기구 트레이", "6", "트레이 모서리와 중앙"],
        ],
        col_widths=[120, 80, 250],
    )
    blocks: list[Block] = [
        H("1", "목적"),
        P("이 절차는 고압증기 멸균기 AC-02의 멸균 공정 밸리데이션 방법과 부하 유형별 사이클 변수를 규정한다."),
        H("2", "적용 범위"),
        P("이 SOP는 멸균실의 고압증기 멸균기 AC-02와 그 부하 구성에 적용된다.", key="P/scope"),
        H("3", "사이클 변수"),
        P("액체 부하와 다공성 부하는 서로 다른 사이클로 멸균하며, 각 사이클의 변수는 아래 표와 같다."),
        liquid,
        porous,
        H("4", "생물학적 지표"),
        P(
            "생물학적 지표는 Geobacillus stearothermophilus 포자 10^6개를 함유한 것을 사용하며, 멸균 후 55-60 °C에서 7일간 배양한다.",
            key="P/bi",
        ),
        bi,
        H("5", "재밸리데이션"),
        P(
            "멸균기는 매년 1회 재밸리데이션하며, 주요 부품을 교체한 경우에는 즉시 재밸리데이션한다.",
            key="P/reval",
        ),
    ]
    questions = [
        cell_q("similar", liquid, "멸균 온도", "액체 부하 멸균 사이클의 멸균 온도 설정값은?", "121 °C"),
        cell_q("similar", porous, "멸균 온도", "다공성 부하 사이클의 멸균 온도는 몇 도인가?", "134 °C"),
        cell_q("similar", liquid, "유지 시간", "액체 부하의 유지 시간 허용 범위는?", "30-35분"),
        cell_q("similar", porous, "챔버 압력", "다공성 부하 멸균 시 챔버 압력의 허용 범위는 얼마인가?", "3.0-3.3 bar"),
        cell_q("table_cell", porous, "건조 시간", "다공성 부하의 건조 시간 기준은?", "20분 이상"),
        cell_q("table_cell", bi, "다공성 부하", "다공성 부하에는 생물학적 지표를 몇 개 배치하는가?", "12"),
        cell_q("exact_id", bi, "기구 트레이", "SOP-KR-318에 따르면 기구 트레이의 생물학적 지표 배치 위치는?", "트레이 모서리와 중앙"),
        Q("prose", "생물학적 지표는 멸균 후 어떤 조건에서 배양하는가?", ["55-60 °C에서 7일간"], [], "P/bi"),
        Q("prose", "멸균기 AC-02의 재밸리데이션 주기는?", ["매년 1회"], [], "P/reval"),
    ]
    return _doc("SOP-KR-318", "고압증기 멸균 공정 밸리데이션", "2.2", "2024-06-10", "밸리데이션팀", blocks, questions)


def korean_specs() -> list[DocSpec]:
    return [korean_lnp_doc(), korean_water_doc(), korean_sterilization_doc()]
