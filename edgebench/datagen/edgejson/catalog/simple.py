"""Simple schema types: two to four flat fields, one short message each."""

from __future__ import annotations

from typing import Any

from edgebench.datagen.edgejson import schema_dsl as s
from edgebench.datagen.edgejson import vocab
from edgebench.datagen.edgejson.catalog.fields import TIME
from edgebench.datagen.edgejson.spec import SchemaSpec
from edgebench.datagen.edgejson.values import Draw


def _thermostat(d: Draw) -> dict[str, Any]:
    return {
        "room": d.pick(vocab.ROOMS),
        "target_celsius": d.integer(32, 52) / 2,  # half degrees, as thermostats step
        "mode": d.pick(("heat", "cool", "auto", "eco")),
        "hold_hours": d.integer(1, 12),
    }


THERMOSTAT_SETPOINT = SchemaSpec(
    schema_id="thermostat_setpoint",
    complexity="simple",
    title="Thermostat Setpoint",
    description="A target temperature requested from a smart thermostat",
    noun="thermostat setting",
    properties={
        "room": s.string("Room the thermostat controls"),
        "target_celsius": s.number("Target temperature in degrees Celsius", 5, 30),
        "mode": s.enum("Operating mode", ("heat", "cool", "auto", "eco")),
        "hold_hours": s.integer("How many hours to hold the setting", 1, 24),
    },
    optional=("hold_hours",),
    sample=_thermostat,
    templates=(
        "Can you set the {room} thermostat to {target_celsius} degrees in {mode} mode?"
        "[ Please hold it there for {hold_hours} hours.]",
        "The hub heard this voice command. Set the {room} to {target_celsius} °C on {mode}"
        "[ and keep it like that for {hold_hours} hours].",
        "Please change the climate control in the {room}. I want {mode} mode with a target of"
        " {target_celsius} degrees Celsius[ for the next {hold_hours} hours]. Thanks!",
        "A schedule note from the family calendar says the {room} should run in {mode} mode at"
        " {target_celsius} °C[, holding for {hold_hours} hours].",
    ),
)


def _door_lock(d: Draw) -> dict[str, Any]:
    return {
        "lock": d.pick(vocab.LOCKS),
        "action": d.pick(("locked", "unlocked")),
        "method": d.pick(("keypad", "app", "key", "fingerprint", "voice")),
        "time": d.clock(0, 23),
    }


DOOR_LOCK_EVENT = SchemaSpec(
    schema_id="door_lock_event",
    complexity="simple",
    title="Door Lock Event",
    description="A smart lock being locked or unlocked",
    noun="door lock event",
    properties={
        "lock": s.string("Which door or lock the event is about"),
        "action": s.enum("What happened to the lock", ("locked", "unlocked")),
        "method": s.enum(
            "How the lock was operated", ("keypad", "app", "key", "fingerprint", "voice")
        ),
        "time": s.string(TIME),
    },
    optional=("time",),
    sample=_door_lock,
    templates=(
        "Security update from the house. The {lock} was {action} with {method} access[ at {time}].",
        "Heads up from your lock hub, someone {action} the {lock} using {method} access"
        "[ at {time}].",
        "[At {time} ]the {lock} got {action}, and the lock reports {method} as the method.",
        "Did you just come home? The app says the {lock} is {action}, done with {method}"
        " access[ at {time}].",
    ),
)


def _battery(d: Draw) -> dict[str, Any]:
    return {
        "device": d.pick(vocab.BATTERY_DEVICES),
        "battery_percent": d.integer(2, 30),
        "charging": d.chance(0.4),
    }


BATTERY_ALERT = SchemaSpec(
    schema_id="battery_alert",
    complexity="simple",
    title="Battery Alert",
    description="A low battery warning from a battery-powered smart home device",
    noun="battery alert",
    properties={
        "device": s.string("Device that reported the low battery"),
        "battery_percent": s.integer("Remaining battery charge in percent", 0, 100),
        "charging": s.boolean("Whether the device is charging now"),
    },
    sample=_battery,
    templates=(
        "Your {device} is down to {battery_percent}% battery and"
        " {charging?is charging right now|is not charging}.",
        "Low battery warning for the {device}, which reports {battery_percent} percent left."
        " It {charging?is plugged in and charging|is not on a charger}.",
        "Hey, I checked the app and the {device} only has {battery_percent}% left."
        " {charging?It's on the charger already.|Nobody has plugged it in yet.}",
        "The {device} sent a battery report of {battery_percent}% and says it"
        " {charging?is currently charging|is running on battery only}.",
    ),
)


def _air_quality(d: Draw) -> dict[str, Any]:
    pm25 = d.decimal(2, 60, 1)
    level = "good" if pm25 < 12 else "moderate" if pm25 < 35 else "poor"
    return {
        "station": d.pick(vocab.AIR_STATIONS),
        "pm25": pm25,
        "co2_ppm": d.integer(400, 1900),
        "level": level,
    }


AIR_QUALITY_SAMPLE = SchemaSpec(
    schema_id="air_quality_sample",
    complexity="simple",
    title="Air Quality Sample",
    description="One reading from an air quality monitor",
    noun="air quality reading",
    properties={
        "station": s.string("Name of the monitoring station"),
        "pm25": s.number("Fine particulate matter PM2.5 in micrograms per cubic metre", 0),
        "co2_ppm": s.integer("Carbon dioxide in parts per million", 0),
        "level": s.enum("Overall air quality rating", ("good", "moderate", "poor")),
    },
    optional=("level",),
    sample=_air_quality,
    templates=(
        "The sensor at {station} measured PM2.5 of {pm25} µg/m³ and CO2 at {co2_ppm} ppm"
        "[, so overall air quality is {level}].",
        "A reading from the {station} monitor just came in with {co2_ppm} ppm of carbon"
        " dioxide and fine particles at {pm25} micrograms per cubic metre."
        "[ The app labels it {level}.]",
        "Can someone open a window? {station} is showing CO2 of {co2_ppm} ppm and PM2.5 of"
        " {pm25}[, status {level}].",
        "The hourly air report for {station} gives particulates (PM2.5) at {pm25} and carbon"
        " dioxide at {co2_ppm} ppm[, rated {level}].",
    ),
)


def _parcel(d: Draw) -> dict[str, Any]:
    return {
        "tracking_number": d.code(d.pick(("EB", "JX", "RT", "LP")), 9),
        "carrier": d.pick(vocab.PARCEL_CARRIERS),
        "status": d.pick(vocab.PARCEL_STATUSES),
        "eta": d.date(),
    }


PARCEL_STATUS = SchemaSpec(
    schema_id="parcel_status",
    complexity="simple",
    title="Parcel Status",
    description="Where a tracked parcel is in its delivery",
    noun="parcel status",
    properties={
        "tracking_number": s.string("Carrier tracking number"),
        "carrier": s.enum("Parcel carrier", vocab.PARCEL_CARRIERS),
        "status": s.enum("Latest tracking status", vocab.PARCEL_STATUSES),
        "eta": s.formatted("date", "Expected delivery date"),
    },
    optional=("eta",),
    sample=_parcel,
    templates=(
        "Hi, my parcel {tracking_number} with {carrier} shows as {status}"
        "[ and the expected delivery date is {eta}]. Can you confirm?",
        "A tracking update from {carrier} says shipment {tracking_number} is now {status}"
        "[, estimated arrival {eta}].",
        "Where is my package? The {carrier} tracking number is {tracking_number} and the site"
        " just says {status}.[ It was supposed to arrive on {eta}.]",
        "The courier {carrier} marked parcel {tracking_number} as {status}[ with an ETA of {eta}].",
    ),
)


def _appointment(d: Draw) -> dict[str, Any]:
    return {
        "patient": d.person(),
        "date": d.date(),
        "time": d.clock(8, 17),
        "department": d.pick(vocab.CLINIC_DEPARTMENTS),
    }


APPOINTMENT_BOOKING = SchemaSpec(
    schema_id="appointment_booking",
    complexity="simple",
    title="Appointment Booking",
    description="A clinic appointment a patient booked or confirmed",
    noun="appointment",
    properties={
        "patient": s.string("Full name of the patient"),
        "date": s.formatted("date", "Appointment date"),
        "time": s.string(TIME),
        "department": s.enum("Clinic department", vocab.CLINIC_DEPARTMENTS),
    },
    optional=("department",),
    sample=_appointment,
    templates=(
        "Hello, this is {patient}. I'd like to confirm my appointment on {date} at {time}"
        "[ with {department}]. Thanks!",
        "A reminder was sent to {patient} that their[ {department}] appointment is booked for"
        " {date} at {time}.",
        "Please book {patient} in for {date} at {time}[ in the {department} department].",
        "Voicemail transcript. Hi, it's {patient} calling about the slot on {date} at {time}"
        "[ for {department}], and I can make it.",
    ),
)


def _expense(d: Draw) -> dict[str, Any]:
    return {
        "employee": d.person(),
        "amount": d.money(8, 900),
        "currency": d.pick(vocab.CURRENCIES),
        "category": d.pick(vocab.EXPENSE_CATEGORIES),
    }


EXPENSE_CLAIM = SchemaSpec(
    schema_id="expense_claim",
    complexity="simple",
    title="Expense Claim",
    description="An employee's request to be reimbursed for an expense",
    noun="expense claim",
    properties={
        "employee": s.string("Employee asking for the reimbursement"),
        "amount": s.number("Amount claimed", 0),
        "currency": s.enum("ISO currency code", vocab.CURRENCIES),
        "category": s.enum("Expense category", vocab.EXPENSE_CATEGORIES),
    },
    sample=_expense,
    templates=(
        "An expense claim came in from {employee} for {amount} {currency}, filed under"
        " {category}. The receipt is attached.",
        "Hi finance team, I paid {amount} {currency} out of pocket for {category} and would"
        " like it reimbursed. Best regards, {employee}",
        "Please reimburse {employee} the sum of {amount} {currency}; it was a {category}"
        " expense from last week's trip.",
        "Can you approve this one? {employee} spent {currency} {amount} on {category}.",
    ),
)


def _stock(d: Draw) -> dict[str, Any]:
    return {
        "sku": d.code("SKU-", 5),
        "product": d.pick(vocab.SHOP_PRODUCTS),
        "units_left": d.integer(0, 40),
        "reorder": d.chance(0.5),
    }


STOCK_LEVEL = SchemaSpec(
    schema_id="stock_level",
    complexity="simple",
    title="Stock Level",
    description="How many units of a product are left in a shop or warehouse",
    noun="stock level",
    properties={
        "sku": s.string("Stock keeping unit code"),
        "product": s.string("Product name"),
        "units_left": s.integer("Units still in stock", 0),
        "reorder": s.boolean("Whether a reorder has been placed"),
    },
    sample=_stock,
    templates=(
        "A quick warehouse check shows only {units_left} units of {product} ({sku}) on the"
        " shelf, and {reorder?a reorder has been placed|no reorder is needed yet}.",
        "We're running low on the {product} ({sku}). The count is {units_left}."
        " {reorder?I already put in a reorder.|Don't reorder yet.}",
        "Inventory note for {sku} ({product}) with {units_left} in stock; the reorder flag is"
        " {reorder?on|off}.",
        "The shelf scanner counted {units_left} of the {product} (item {sku}) and"
        " {reorder?triggered an automatic reorder|did not trigger a reorder}.",
    ),
)


def _network(d: Draw) -> dict[str, Any]:
    return {
        "device": d.pick(vocab.NETWORK_DEVICES),
        "ssid": d.pick(vocab.SSIDS),
        "signal_dbm": d.integer(-90, -30),
        "connected": d.chance(0.6),
    }


NETWORK_STATUS = SchemaSpec(
    schema_id="network_status",
    complexity="simple",
    title="Network Status",
    description="The Wi-Fi link of one smart home device",
    noun="network status",
    properties={
        "device": s.string("The device on the network"),
        "ssid": s.string("Wi-Fi network name"),
        "signal_dbm": s.integer("Received signal strength in dBm", -120, 0),
        "connected": s.boolean("Whether the device is connected now"),
    },
    sample=_network,
    templates=(
        "The {device} {connected?is connected to|dropped off} the {ssid} network with a signal"
        " of {signal_dbm} dBm.",
        "Network diagnostics say the {device} sees {ssid} at {signal_dbm} dBm and is"
        " {connected?online|offline}.",
        "Why is my {device} {connected?so slow|not working}? It {connected?is on|can't join}"
        " {ssid} and the signal reads {signal_dbm} dBm.",
        "The router reports the {device} on network {ssid} with signal strength {signal_dbm}"
        " dBm, {connected?currently connected|currently disconnected}.",
    ),
)


def _meter(d: Draw) -> dict[str, Any]:
    return {
        "meter_id": d.code("MTR-", 6),
        "kwh": d.decimal(1000, 60000, 1),
        "reading_date": d.date(),
        "estimated": d.chance(0.3),
    }


METER_READING = SchemaSpec(
    schema_id="meter_reading",
    complexity="simple",
    title="Meter Reading",
    description="An electricity meter reading submitted by a customer or a smart meter",
    noun="meter reading",
    properties={
        "meter_id": s.string("Meter number"),
        "kwh": s.number("Meter total in kilowatt-hours", 0),
        "reading_date": s.formatted("date", "Date the meter was read"),
        "estimated": s.boolean("Whether the reading is an estimate"),
    },
    optional=("estimated",),
    sample=_meter,
    templates=(
        "Meter {meter_id} showed {kwh} kWh on {reading_date}"
        "[; this reading was {estimated?estimated|taken on site}].",
        "Hi, I'm submitting my electricity reading of {kwh} kWh for meter number {meter_id},"
        " read on {reading_date}.[ {estimated?I had to estimate it.|I read it off the meter"
        " myself.}]",
        "On {reading_date} the smart meter {meter_id} reported a total of {kwh} kWh"
        "[ ({estimated?an estimated value|an actual value})].",
        "The energy portal confirms your reading of {kwh} kWh for meter {meter_id} dated"
        " {reading_date}[ as an {estimated?estimated|actual} reading].",
    ),
)

SIMPLE_SPECS = (
    THERMOSTAT_SETPOINT,
    DOOR_LOCK_EVENT,
    BATTERY_ALERT,
    AIR_QUALITY_SAMPLE,
    PARCEL_STATUS,
    APPOINTMENT_BOOKING,
    EXPENSE_CLAIM,
    STOCK_LEVEL,
    NETWORK_STATUS,
    METER_READING,
)
