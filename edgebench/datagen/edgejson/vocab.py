"""Word lists the samplers draw from: invented names, places, products and devices.

Plain ASCII on purpose: a small model should be judged on structure, not on spelling
accented names back.
"""

from __future__ import annotations

FIRST_NAMES = (
    "Amira", "Ben", "Chloe", "Diego", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
    "Keiko", "Liam", "Maya", "Noah", "Olga", "Pavel", "Quinn", "Rosa", "Samir", "Tara",
    "Umar", "Vera", "Wen", "Yusuf", "Zoe", "Marta", "Kofi", "Lena", "Ravi", "Sofia",
)  # fmt: skip
LAST_NAMES = (
    "Adeyemi", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova",
    "Jensen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe",
    "Rossi", "Schmidt", "Tanaka", "Unger", "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Novak",
    "Silva", "Murphy", "Patel",
)  # fmt: skip
EMAIL_DOMAINS = ("example.com", "example.org", "example.net")

CITIES = (
    ("Leeds", "United Kingdom"), ("Lyon", "France"), ("Porto", "Portugal"), ("Graz", "Austria"),
    ("Utrecht", "Netherlands"), ("Aarhus", "Denmark"), ("Bologna", "Italy"), ("Gdansk", "Poland"),
    ("Valencia", "Spain"), ("Tampere", "Finland"), ("Dresden", "Germany"), ("Cork", "Ireland"),
    ("Austin", "United States"), ("Calgary", "Canada"), ("Osaka", "Japan"), ("Pune", "India"),
    ("Curitiba", "Brazil"), ("Perth", "Australia"),
)  # fmt: skip
STREETS = (
    "Elm Street", "Harbour Road", "Mill Lane", "Station Avenue", "Oak Drive", "Canal Street",
    "Park Road", "Church Lane", "Bridge Street", "Maple Avenue",
)  # fmt: skip

# Smart home and IoT.
ROOMS = (
    "living room", "bedroom", "kitchen", "office", "nursery", "guest room", "basement",
    "hallway", "attic", "sunroom",
)  # fmt: skip
BATTERY_DEVICES = (
    "hallway motion sensor", "back garden camera", "kitchen smoke detector", "front door sensor",
    "bedroom window sensor", "water leak sensor", "garage tilt sensor", "porch doorbell",
)  # fmt: skip
NETWORK_DEVICES = (
    "living room speaker", "garage camera", "smart fridge", "office printer", "robot vacuum",
    "baby monitor", "doorbell camera", "smart TV",
)  # fmt: skip
SSIDS = ("HomeNet-5G", "Garage_AP", "Office-Guest", "MeshNode-2", "Loft WiFi", "Studio-24")
LOCKS = ("front door", "back door", "garage side door", "patio door", "garden shed")
CAMERAS = ("driveway camera", "porch camera", "backyard camera", "garage camera", "gate camera")
CAMERA_ZONES = ("front path", "gate", "lawn", "driveway", "bin store")
AIR_STATIONS = (
    "Rooftop North", "Elm Street kiosk", "Lab 2 intake", "School gate", "Library roof",
    "Bus depot", "Riverside park",
)  # fmt: skip
SCENES = (
    "Good Night", "Movie Time", "Away Mode", "Morning Routine", "Dinner Party",
    "Work From Home", "Weekend Lie-in",
)  # fmt: skip
# Each device with the commands it understands, so a scene never asks a lock to dim.
SCENE_DEVICES = (
    ("front door", ("lock", "unlock")), ("back door", ("lock",)),
    ("garage door", ("open", "close")), ("living room blinds", ("open", "close")),
    ("bedroom blinds", ("open", "close")), ("hallway lights", ("dim",)),
    ("bedroom lamp", ("dim",)), ("porch light", ("dim",)), ("coffee machine", ("start",)),
    ("robot vacuum", ("start", "stop")), ("garden sprinklers", ("start", "stop")),
    ("kitchen radio", ("stop",)),
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
GREENHOUSE_SITES = (
    "North greenhouse", "Tomato house 2", "Nursery tunnel", "Herb glasshouse",
    "Research bay B", "Orchid house",
)  # fmt: skip
GREENHOUSE_ALERTS = (
    "frost risk tonight", "vent motor stuck", "humidity above target", "low water pressure",
    "CO2 dosing paused",
)  # fmt: skip

# Commerce and enterprise.
SHOP_PRODUCTS = (
    "wireless earbuds", "smart bulb starter kit", "USB-C charger", "air purifier",
    "fitness tracker", "mesh router", "electric kettle", "e-reader", "robot vacuum",
    "video doorbell",
)  # fmt: skip
REVIEW_PROS = (
    "long battery life", "easy setup", "quiet operation", "compact size", "bright display",
    "solid build", "fast charging", "clear sound", "good value", "simple app",
)  # fmt: skip
# (item, lowest unit price, highest unit price)
GROCERIES = (
    ("oat milk", 1.29, 2.49), ("sourdough loaf", 2.8, 4.5), ("free-range eggs", 2.5, 4.2),
    ("bananas", 0.9, 1.9), ("cheddar", 2.9, 5.5), ("ground coffee", 4.5, 8.9),
    ("basmati rice", 1.8, 3.6), ("olive oil", 5.2, 9.8), ("greek yogurt", 1.1, 2.6),
    ("pasta", 0.8, 1.9), ("tomatoes", 1.5, 3.2), ("dark chocolate", 1.4, 3.1),
)  # fmt: skip
STORES = ("FreshMart", "Corner Grocer", "GreenBasket", "Daily Harvest", "Market Hall", "ValueFoods")
SUPPLIERS = (
    "Northwind Components", "Acorn Office Supply", "Vertex Industrial", "Helios Electronics",
    "Granite Tools", "Kestrel Packaging", "Orbit Fasteners",
)  # fmt: skip
PART_PREFIXES = ("BRK-", "CBL-", "FLT-", "VLV-", "PCB-", "SCR-", "HNG-")
FREIGHT_CARRIERS = (
    "RapidFreight", "Meridian Cargo", "Polar Haulage", "TransAlp Shipping", "Bluefin Logistics",
)  # fmt: skip
PARCEL_CARRIERS = ("DHL", "UPS", "FedEx", "PostNL", "GLS", "DPD")
PARCEL_STATUSES = ("registered", "shipped", "delayed", "delivered", "returned")
FUEL_STATIONS = (
    "Ringway Fuel", "Nordstadt Tankstelle", "Riverside Services", "Canal Road Garage",
    "Parc Energie", "Airport Fuel Stop",
)  # fmt: skip
FUEL_TYPES = ("diesel", "unleaded", "premium", "lpg")
CURRENCIES = ("EUR", "USD", "GBP", "CHF", "SEK")
EXPENSE_CATEGORIES = ("travel", "meals", "lodging", "software", "training")
DEPARTMENTS = ("finance", "sales", "engineering", "marketing", "operations")
URGENCIES = ("low", "normal", "high", "critical")
HELPDESK_ISSUES = (
    "the VPN drops every few minutes", "the printer jams on every job",
    "the shared drive will not open", "the mail app crashes on startup",
    "the second monitor shows no signal", "the password reset link has expired",
    "the laptop fan is very loud", "the video call app cannot find my camera",
)  # fmt: skip
HELPDESK_DEVICES = (
    "laptop", "docking station", "monitor", "headset", "keyboard", "printer", "phone", "webcam",
)  # fmt: skip
SHIFT_ROLES = ("cashier", "picker", "driver", "technician", "supervisor")
SHIFT_TASKS = (
    "restock shelves", "check deliveries", "count the tills", "update price labels",
    "clean the break room", "load the vans", "run the stock count", "train a new starter",
)  # fmt: skip

# Health. (reason for visit, diagnoses, prescriptions as (drug, dose mg, per day, days))
CLINIC_CASES = (
    ("a persistent cough", ("acute bronchitis",), (("dextromethorphan", 15, 3, 5),)),
    (
        "a sore throat and fever",
        ("strep throat",),
        (("amoxicillin", 500, 2, 10), ("ibuprofen", 400, 3, 3)),
    ),
    ("lower back pain", ("lumbar strain",), (("naproxen", 250, 2, 7),)),
    ("an itchy rash on both arms", ("contact dermatitis",), (("cetirizine", 10, 1, 14),)),
    (
        "frequent headaches",
        ("tension headache", "mild dehydration"),
        (("paracetamol", 500, 3, 5),),
    ),
    ("a painful ear", ("otitis externa",), (("ciprofloxacin drops", 0.3, 2, 7),)),
    ("high readings on a home blood pressure cuff", ("hypertension",), (("amlodipine", 5, 1, 30),)),
    (
        "sneezing and itchy eyes",
        ("allergic rhinitis", "conjunctivitis"),
        (("loratadine", 10, 1, 30), ("ketotifen drops", 0.25, 2, 14)),
    ),
)
CLINIC_DEPARTMENTS = ("dermatology", "cardiology", "physiotherapy", "dentistry", "pediatrics")
