"""PARB skins: render a template into a surface domain (seed 000 §14, generator item 3, item 6).

A skin assigns every role a concrete entity of the domain and renders a short narrative (L0)
from the template's relations and causal edges with phrase tables (our own wording,
deterministic). :func:`render` returns the gold :class:`~analogist.signature.Signature`: fresh
role tags per item, the template's relations and edges, L0 narrative, L1 summary, L2 abstract
text with role tags, L3 principle, surface domain and entities.

A *nonce skin* replaces entity names AND relation, state and edge words by random pronounceable
tokens (the topology is kept; the gold Signature keeps the vocabulary predicates). Every nonce
item has a *familiar-word twin*: same template, same role tags, a familiar domain.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from analogist.bench.parb.templates import Edge, Rel, Template, parse_state
from analogist.signature import Signature, validate_signature

_W = str.split

#: Surface domains: entity kind → candidate entity names ("_" joins multi-word names).
DOMAINS: dict[str, dict[str, list[str]]] = {
    "software_operations": {
        "store": _W("primary_database config_repository object_bucket ledger_table"),
        "copy": _W("read_replica edge_cache search_index nightly_snapshot"),
        "agent": _W("billing_service batch_job deploy_bot api_gateway"),
        "monitor": _W("health_probe metrics_agent log_shipper uptime_checker"),
        "component": _W("auth_server message_broker dns_resolver storage_node"),
        "process": _W("web_cluster checkout_flow ingest_pipeline render_farm"),
        "resource": _W("connection_pool cpu_quota disk_volume thread_pool"),
        "controller": _W("autoscaler rate_limiter job_scheduler release_manager"),
        "group": _W("client_fleet worker_pool tenant_base crawler_swarm"),
        "metric": _W("ticket_count uptime_score coverage_figure latency_chart"),
        "goal": _W("user_satisfaction code_quality service_reliability"),
        "signal": _W("pager_alert cache_flush wakeup_event deploy_hook"),
    },
    "finance": {
        "store": _W("general_ledger custodian_record trade_blotter price_master"),
        "copy": _W("risk_extract quarterly_summary pricing_feed shadow_book"),
        "agent": _W("trading_desk portfolio_manager loan_officer treasury_team"),
        "monitor": _W("compliance_screen auditor reconciliation_clerk margin_watch"),
        "component": _W("clearing_house prime_broker payment_rail custody_bank"),
        "process": _W("settlement_cycle lending_book fund_portfolio bond_market"),
        "resource": _W("credit_line liquidity_buffer collateral_pool capital_reserve"),
        "controller": _W("central_bank risk_committee regulator board"),
        "group": _W("retail_investors depositors hedge_funds lenders"),
        "metric": _W("quarterly_earnings loan_volume sharpe_ratio rating_grade"),
        "goal": _W("firm_value credit_quality investor_returns"),
        "signal": _W("margin_call rate_announcement earnings_release rebalance_notice"),
    },
    "medicine": {
        "store": _W("patient_chart lab_record pharmacy_master blood_bank"),
        "copy": _W("handover_note discharge_summary printed_list transfer_sheet"),
        "agent": _W("night_nurse resident surgeon pharmacist"),
        "monitor": _W("pulse_oximeter cardiac_monitor infusion_alarm lab_analyser"),
        "component": _W("oxygen_supply ventilator hospital_network sterilizer"),
        "process": _W("patient_circulation ward_operation immune_response dialysis_run"),
        "resource": _W("icu_beds blood_supply nursing_hours theatre_slots"),
        "controller": _W("bed_manager triage_desk hospital_board infusion_pump"),
        "group": _W("outpatients ambulance_crews trial_patients visiting_families"),
        "metric": _W("waiting_time readmission_rate bed_turnover survey_score"),
        "goal": _W("patient_health care_quality recovery_outcome"),
        "signal": _W("code_call visiting_bell shift_change discharge_order"),
    },
    "logistics": {
        "store": _W("warehouse_inventory master_manifest depot_register dock_schedule"),
        "copy": _W("printed_picklist driver_tablet forecast_sheet yard_board"),
        "agent": _W("dispatcher forklift_driver courier freight_broker"),
        "monitor": _W("gps_tracker gate_scanner dock_camera temperature_logger"),
        "component": _W("sorting_hub main_bridge rail_junction loading_crane"),
        "process": _W("delivery_network shipping_line sorting_run cold_chain"),
        "resource": _W("loading_dock truck_fleet storage_racks fuel_depot"),
        "controller": _W("yard_master route_planner port_authority depot_manager"),
        "group": _W("delivery_vans shippers couriers_crowd drivers"),
        "metric": _W("parcels_scanned on_time_rate miles_logged fill_rate"),
        "goal": _W("customer_delivery network_throughput freight_safety"),
        "signal": _W("gate_opening shift_horn dispatch_broadcast berth_notice"),
    },
    "ecology": {
        "store": _W("aquifer seed_bank river_basin soil_layer"),
        "copy": _W("field_survey census_map pollen_record tagging_log"),
        "agent": _W("wolf_pack beaver_colony fishing_fleet grazing_herd"),
        "monitor": _W("camera_trap water_gauge bird_counter sonar_buoy"),
        "component": _W("keystone_species coral_reef mangrove_belt pollinator_guild"),
        "process": _W("forest_canopy wetland plankton_bloom algae_mat"),
        "resource": _W("grazing_meadow fish_stock nesting_cliffs spring_water"),
        "controller": _W("park_warden predator_guild river_dam fishing_council"),
        "group": _W("deer_population locust_swarm villagers migrating_geese"),
        "metric": _W("hatch_count trap_tally canopy_index catch_weight"),
        "goal": _W("ecosystem_health species_diversity stock_recovery"),
        "signal": _W("spring_thaw monsoon_onset mating_call flood_pulse"),
    },
    "manufacturing": {
        "store": _W("bill_of_materials master_drawing parts_inventory recipe_database"),
        "copy": _W("shop_traveler printed_drawing station_copy setup_sheet"),
        "agent": _W("line_operator welding_robot maintenance_crew paint_cell"),
        "monitor": _W("vision_inspector torque_sensor quality_gauge thermal_camera"),
        "component": _W("compressor power_supply main_conveyor cooling_loop"),
        "process": _W("assembly_line furnace press_shop curing_oven"),
        "resource": _W("tool_crib spare_parts test_bench crane_time"),
        "controller": _W("plant_manager shift_supervisor line_controller production_planner"),
        "group": _W("supplier_base work_crews machine_fleet contractors"),
        "metric": _W("units_shipped scrap_rate cycle_time defect_tally"),
        "goal": _W("product_quality customer_safety plant_yield"),
        "signal": _W("shift_bell restart_command batch_release tool_change"),
    },
}
DOMAIN_NAMES: tuple[str, ...] = tuple(DOMAINS)

#: predicate → phrasing variants ({a}, {b}, {c} are entity names).
PRED_PHRASES: dict[str, tuple[str, str]] = {
    "derives_from": ("the {a} is copied from the {b}", "the {a} was produced out of the {b}"),
    "diverges_from": ("the {a} has drifted away from the {b}", "the {a} no longer agrees with the {b}"),
    "trusts_as_authoritative": ("the {a} treats the {b} as the truth",
                                "the {a} takes the {b} at its word"),
    "skips_check": ("the {a} never checks the {b}", "the {a} does not verify against the {b}"),
    "reads_from": ("the {a} reads from the {b}", "the {a} takes its figures from the {b}"),
    "writes_to": ("the {a} writes into the {b}", "the {a} updates the {b}"),
    "observes": ("the {a} watches the {b}", "the {a} keeps an eye on the {b}"),
    "reports_absence": ("the {a} reports the {b} as missing", "the {a} says the {b} is gone"),
    "masks": ("the {a} hides the {b}", "the {a} covers up the {b}"),
    "compensates_for": ("the {a} makes up for the {b}", "the {a} quietly offsets the {b}"),
    "depends_on": ("the {a} depends on the {b}", "the {a} cannot work without the {b}"),
    "amplifies": ("the {a} amplifies the {b}", "the {a} magnifies the {b}"),
    "feeds_back_to": ("the {a} feeds back into the {b}", "the {a} loops back onto the {b}"),
    "limits": ("the {a} is meant to limit the {b}", "the {a} should cap the {b}"),
    "triggers": ("the {a} triggers the {b}", "the {a} sets off the {b}"),
    "competes_for": ("the {a} competes for the {b}", "the {a} contends for the {b}"),
    "starves": ("the {a} starves the {b}", "the {a} leaves nothing for the {b}"),
    "schedules": ("the {a} schedules the {b}", "the {a} gives turns to the {b}"),
    "ignores": ("the {a} ignores the {b}", "the {a} pays no attention to the {b}"),
    "has_priority_over": ("the {a} has priority over the {b}", "the {a} ranks above the {b}"),
    "holds_lock": ("the {a} holds the {b}", "the {a} keeps hold of the {b}"),
    "waits_for": ("the {a} waits for the {b}", "the {a} is stuck awaiting the {b}"),
    "preempts": ("the {a} preempts the {b}", "the {a} pushes ahead of the {b}"),
    "validates": ("the {a} validates the {b}", "the {a} checks the {b} first"),
    "races_with": ("the {a} races with the {b}", "the {a} and the {b} act at the same moment"),
    "propagates_to": ("trouble in the {a} spreads to the {b}", "the {a} passes its faults to the {b}"),
    "configures": ("the {a} configures the {b}", "the {a} is how the {b} gets set up"),
    "consumes": ("the {a} consumes the {b}", "the {a} uses up the {b}"),
    "retries": ("the {a} retries the {b}", "the {a} repeats the {b} after each failure"),
    "duplicates": ("the {a} duplicates the {b}", "the {a} is a spare for the {b}"),
    "shares": ("the {a} and the {b} share the {c}", "the {a} and the {b} both rely on the {c}"),
    "contains": ("the {a} contains the {b}", "the {a} includes the {b}"),
    "assumes": ("the {a} assumes the {b} is fine", "the {a} takes the {b} for granted"),
    "filters": ("the {a} filters the {b}", "the {a} weeds out part of the {b}"),
    "measures": ("the {a} measures the {b}", "the {a} is used to gauge the {b}"),
    "proxies_for": ("the {a} stands in for the {b}", "the {a} is a proxy for the {b}"),
    "optimises_for": ("the {a} optimises the {b}", "the {a} chases the {b}"),
    "incentivises": ("the {a} rewards the {b}", "the {a} pays the {b} by results"),
    "signals": ("the {a} signals the {b}", "the {a} alerts the {b}"),
    "exceeds": ("the {a} exceeds the {b}", "the {a} outgrows the {b}"),
    "produces": ("the {a} produces the {b}", "the {a} replenishes the {b}"),
    "belongs_to": ("the {a} belongs to the {b}", "the {a} is owned by the {b}"),
}

#: Per-domain phrase tables: domain → predicate → (variant 0, variant 1), over the generic ones.
DOMAIN_PHRASES: dict[str, dict[str, tuple[str, str]]] = {
    "software_operations": {
        "reads_from": ("the {a} queries the {b}", "the {a} fetches its data from the {b}"),
        "derives_from": ("the {a} is replicated from the {b}", "the {a} is built from the {b}"),
        "retries": ("the {a} re-sends the {b}", "the {a} fires the {b} again after each timeout"),
        "depends_on": ("the {a} calls the {b}", "the {a} needs the {b} to serve requests"),
    },
    "finance": {
        "reads_from": ("the {a} books against the {b}", "the {a} prices off the {b}"),
        "derives_from": ("the {a} is compiled from the {b}", "the {a} is extracted from the {b}"),
        "incentivises": ("the {a} pays bonuses to the {b}", "the {a} compensates the {b}"),
        "consumes": ("the {a} draws down the {b}", "the {a} burns through the {b}"),
    },
    "medicine": {
        "reads_from": ("the {a} consults the {b}", "the {a} goes by the {b}"),
        "derives_from": ("the {a} is transcribed from the {b}", "the {a} is summarised from the {b}"),
        "observes": ("the {a} monitors the {b}", "the {a} tracks the {b}"),
        "signals": ("the {a} pages the {b}", "the {a} calls the {b} to the bedside"),
    },
    "logistics": {
        "reads_from": ("the {a} works off the {b}", "the {a} picks according to the {b}"),
        "derives_from": ("the {a} is printed from the {b}", "the {a} is loaded from the {b}"),
        "consumes": ("the {a} ties up the {b}", "the {a} occupies the {b}"),
        "schedules": ("the {a} dispatches the {b}", "the {a} assigns slots to the {b}"),
    },
    "ecology": {
        "consumes": ("the {a} feeds on the {b}", "the {a} grazes down the {b}"),
        "derives_from": ("the {a} is sampled from the {b}", "the {a} is drawn up from the {b}"),
        "produces": ("the {a} regrows the {b}", "the {a} restocks the {b}"),
        "competes_for": ("the {a} forages for the {b}", "the {a} jostles for the {b}"),
    },
    "manufacturing": {
        "reads_from": ("the {a} builds to the {b}", "the {a} follows the {b}"),
        "derives_from": ("the {a} is issued from the {b}", "the {a} is revised from the {b}"),
        "writes_to": ("the {a} stamps the {b}", "the {a} posts its output to the {b}"),
        "depends_on": ("the {a} runs on the {b}", "the {a} stops without the {b}"),
    },
}

#: attribute → nominal phrasing variants ({x} is an entity name).
STATE_PHRASES: dict[str, tuple[str, str]] = {
    "false_claim": ("a wrong conclusion by the {x}", "a mistaken belief held by the {x}"),
    "failure": ("the failure of the {x}", "the breakdown of the {x}"),
    "stale": ("the staleness of the {x}", "outdated contents in the {x}"),
    "overload": ("overload on the {x}", "too much demand on the {x}"),
    "outage": ("an outage of the {x}", "the {x} going down"),
    "deadlock": ("a standstill of the {x}", "the {x} freezing"),
    "data_loss": ("lost work at the {x}", "data lost by the {x}"),
    "corrupted": ("corruption in the {x}", "bad values in the {x}"),
    "unobserved": ("the {x} going unseen", "nobody noticing the {x}"),
    "delayed": ("a delay of the {x}", "the {x} being held up"),
    "exhausted": ("exhaustion of the {x}", "the {x} running dry"),
    "unverified": ("the {x} being unchecked", "nobody verifying the {x}"),
    "wasted_effort": ("wasted effort by the {x}", "futile work by the {x}"),
    "degraded": ("decline of the {x}", "the {x} getting worse"),
    "correct": ("the {x} working as designed", "normal operation of the {x}"),
    "biased": ("bias in the {x}", "a skewed {x}"),
}

EDGE_PHRASES: dict[str, tuple[str, str]] = {
    "causes": ("{c} leads to {e}", "{c} brings about {e}"),
    "prevents": ("{c} prevents {e}", "{c} stops {e}"),
    "enables": ("{c} makes {e} possible", "{c} opens the way to {e}"),
    "masks": ("{c} hides {e}", "{c} conceals {e}"),
    "delays": ("{c} holds up {e}", "{c} postpones {e}"),
}
NEG_EDGE = ("{c} reduces {e}", "{c} weakens {e}")

#: Words ignored when comparing content vocabularies (nonce vs familiar narratives).
STOPWORDS = frozenset(_W(
    "the and of a an so to in on at by is are was were be it its this that then which with for "
    "from as or not no but"))

_CONS = "bdfgklmnprstvz"
_VOW = "aeiou"


def _all_familiar_words() -> frozenset[str]:
    words: set[str] = set()
    texts: list[str] = []
    for kinds in DOMAINS.values():
        for names in kinds.values():
            texts.extend(n.replace("_", " ") for n in names)
    for table in (PRED_PHRASES, STATE_PHRASES, EDGE_PHRASES, *DOMAIN_PHRASES.values()):
        for variants in table.values():
            texts.extend(variants)
    texts.extend(NEG_EDGE)
    texts.extend(DOMAIN_NAMES)
    texts.append("in the end")
    for t in texts:
        words.update(content_words(t))
    return frozenset(words)


def content_words(text: str) -> set[str]:
    """Lower-cased alphabetic tokens of at least 3 letters, minus :data:`STOPWORDS`."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS}


FAMILIAR_WORDS = _all_familiar_words()


def nonce_word(rng: random.Random, used: set[str]) -> str:
    """A pronounceable token (CV syllables) that is no familiar word, stopword or used token."""
    while True:
        n = rng.choice((2, 3))
        w = "".join(rng.choice(_CONS) + rng.choice(_VOW) for _ in range(n))
        if rng.random() < 0.5:
            w += rng.choice("kmnrst")
        if w not in used and w not in FAMILIAR_WORDS and w not in STOPWORDS:
            used.add(w)
            return w


@dataclass(frozen=True)
class Skin:
    """How one item looks: domain (or "nonce"), entity per template role, phrase variant, and
    for nonce skins the nonce word for every predicate, state and edge type."""

    domain: str
    entities: Mapping[str, str]              # template role tag → entity name
    variant: int = 0
    lexicon: Mapping[str, str] = field(default_factory=dict)   # nonce only

    @property
    def nonce(self) -> bool:
        return self.domain == "nonce"


def familiar_skin(t: Template, domain: str, rng: random.Random, variant: int = 0) -> Skin:
    kinds = DOMAINS[domain]
    taken: set[str] = set()
    ents: dict[str, str] = {}
    for tag, kind, _d in t.roles:
        pool = [n for n in kinds[kind] if n not in taken]
        name = rng.choice(pool)
        taken.add(name)
        ents[tag] = name.replace("_", " ")
    return Skin(domain, ents, variant)


def nonce_skin(t: Template, rng: random.Random) -> Skin:
    used: set[str] = set()
    ents = {tag: nonce_word(rng, used) for tag in t.role_tags}
    lex: dict[str, str] = {}
    for r in t.relations:
        lex.setdefault(r[0], nonce_word(rng, used))
    for e in t.causal_chain:
        for a in (e[0], e[2]):
            lex.setdefault(parse_state(a)[0], nonce_word(rng, used))
        lex.setdefault("edge:" + e[1], nonce_word(rng, used))
    return Skin("nonce", ents, 0, lex)


def extend_lexicon(skin: Skin, relations: Iterable[Rel], edges: Iterable[Edge],
                   rng: random.Random) -> Skin:
    """A nonce skin whose lexicon also covers predicates and edge types a decoy introduced."""
    if not skin.nonce:
        return skin
    used = set(skin.entities.values()) | set(skin.lexicon.values())
    lex = dict(skin.lexicon)
    for r in relations:
        if r[0] not in lex:
            lex[r[0]] = nonce_word(rng, used)
    for e in edges:
        for a in (e[0], e[2]):
            p = parse_state(a)[0]
            if p not in lex:
                lex[p] = nonce_word(rng, used)
        if "edge:" + e[1] not in lex:
            lex["edge:" + e[1]] = nonce_word(rng, used)
    return Skin(skin.domain, skin.entities, skin.variant, lex)


# -- sentences ---------------------------------------------------------------------------------
def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def rel_sentence(rel: Rel, skin: Skin) -> str:
    names = [skin.entities[a] for a in rel[1:]]
    if skin.nonce:
        w = skin.lexicon[rel[0]]
        if len(names) == 3:
            return f"The {names[0]} and the {names[1]} {w} the {names[2]}."
        return f"The {names[0]} {w} the {names[1]}."
    table = DOMAIN_PHRASES.get(skin.domain, {})
    fmt = (table.get(rel[0]) or PRED_PHRASES[rel[0]])[skin.variant % 2]
    return _cap(fmt.format(**dict(zip("abc", names, strict=False)))) + "."


def state_phrase(atom: str, skin: Skin) -> str:
    p, args = parse_state(atom)
    x = " and the ".join(skin.entities[a] for a in args)
    if skin.nonce:
        return f"the {skin.lexicon[p]} of the {x}"
    return STATE_PHRASES[p][skin.variant % 2].format(x=x)


def edge_sentence(edge: Edge, skin: Skin) -> str:
    c, e = state_phrase(edge[0], skin), state_phrase(edge[2], skin)
    if skin.nonce:
        w = skin.lexicon["edge:" + edge[1]]
        return _cap(f"{c} {w} {e}" + ("" if edge[3] > 0 else " not")) + "."
    fmt = (EDGE_PHRASES[edge[1]] if edge[3] > 0 else NEG_EDGE)[skin.variant % 2]
    return _cap(fmt.format(c=c, e=e)) + "."


def narrative(relations: Iterable[Rel], edges: Iterable[Edge], skin: Skin) -> str:
    return " ".join([rel_sentence(r, skin) for r in relations]
                    + [edge_sentence(e, skin) for e in edges])


def _abstract(relations: Iterable[Rel], edges: Iterable[Edge], tags: Mapping[str, str]) -> str:
    parts = [f"{r[0].replace('_', ' ')}({', '.join(tags[a] for a in r[1:])})" for r in relations]
    for e in edges:
        c = _map_atom(e[0], tags)
        f = _map_atom(e[2], tags)
        parts.append(f"{c} {e[1]}{'' if e[3] > 0 else ' (negatively)'} {f}")
    return "; ".join(parts)


def _map_atom(atom: str, tags: Mapping[str, str]) -> str:
    p, args = parse_state(atom)
    return f"{p}({','.join(tags[a] for a in args)})"


def map_text(text: str, tags: Mapping[str, str]) -> str:
    """Replace whole-word role tags in ``text`` (longest first)."""
    for k in sorted(tags, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(k)}\b", tags[k], text)
    return text


def fresh_tags(t: Template, rng: random.Random) -> dict[str, str]:
    """Template tag → fresh per-item tag (a letter and two digits; no word-like tokens)."""
    used: set[str] = set()
    out: dict[str, str] = {}
    for tag in t.role_tags:
        while True:
            cand = f"{rng.choice('BCDFGHJKLMNPQRSTVWXZ')}{rng.randrange(10, 100)}"
            if cand not in used:
                used.add(cand)
                out[tag] = cand
                break
    return out


def render(t: Template, skin: Skin, tags: Mapping[str, str], episode_id: str,
           relations: Iterable[Rel] | None = None, edges: Iterable[Edge] | None = None,
           ) -> Signature:
    """The gold Signature of ``t`` (or of an edited structure over ``t``'s role tags)."""
    rels = list(t.relations if relations is None else relations)
    eds = list(t.causal_chain if edges is None else edges)
    l0 = narrative(rels, eds, skin)
    concl = [e for e in eds if e[2] in t.conclusion]
    last = concl[-1] if concl else (eds[-1] if eds else None)
    l1 = (edge_sentence(last, skin) if last is not None else rel_sentence(rels[0], skin))
    roles = {tags[tag]: skin.entities[tag] for tag in t.role_tags}
    data = {
        "episode_id": episode_id,
        "kind": "failure",
        "roles": roles,
        "relations": [[r[0], *(tags[a] for a in r[1:])] for r in rels],
        "causal_chain": [{"cause": _map_atom(e[0], tags), "edge": e[1],
                          "effect": _map_atom(e[2], tags), "sign": e[3], "status": e[4]}
                         for e in eds],
        "violated_invariant": map_text(t.violated_invariant, tags),
        "fix_operator": map_text(t.fix_operator, tags),
        "levels": {"L0": l0, "L1": l1, "L2": _abstract(rels, eds, tags), "L3": t.principle},
        "surface": {"domain": skin.domain,
                    "entities": [skin.entities[tag] for tag in t.role_tags]},
        "provenance": {"writer": "parb-generator"},
    }
    return validate_signature(data, source=episode_id)
