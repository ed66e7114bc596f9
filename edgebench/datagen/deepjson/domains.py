"""The domains of the built-in DeepJSONEval-style set: one property tree each.

Every tree reaches depth 7 (the root is level 1) along several branches, so Algorithm 1
can build schemas of any depth from 3 to 7 in every domain. Sibling names are unique,
values are plain enough that the text can state them verbatim.
"""

from __future__ import annotations

from edgebench.datagen.deepjson.tree import (
    Domain,
    enum,
    flag,
    num,
    nums,
    obj,
    olist,
    text,
    texts,
)

DEVICE = Domain(
    name="device",
    entity="the device",
    names=("Nova Band X2", "Orbit Watch 5", "Pulse Tab Mini", "Lumen Phone S", "Arc Buds Pro"),
    filler=(
        "Early reviewers mostly talked about how light it feels in the hand.",
        "The launch event was streamed to several thousand viewers.",
        "Retail packaging is made from recycled cardboard.",
        "Some owners on forums asked for more colour options in future models.",
    ),
    root=obj(
        "Device", "A consumer electronic device", "device",
        text("Brand", "Manufacturer brand name", "brand", "Auralis", "Keplar", "Vireo", "Norda"),
        num("ReleaseYear", "Year the device was released", "release year", 2019, 2025),
        flag(
            "IsWaterproof", "Whether the device is waterproof", "waterproofing",
            "is waterproof", "is not waterproof",
        ),
        texts("Colors", "Colours the device is sold in", "colours",
              "black", "silver", "forest green", "sand", "navy blue", "coral"),
        obj(
            "Hardware", "Physical components of the device", "hardware",
            num("MemoryGB", "Amount of RAM in GB", "memory", 2, 16, unit="GB"),
            nums("StorageOptionsGB", "Storage sizes offered, in GB", "storage options",
                 32, 512, unit="GB"),
            obj(
                "Processor", "The main processor", "processor",
                text("Model", "Processor model name", "model", "Helix 7", "Quark A3", "Tern 9"),
                num("CoreCount", "Number of CPU cores", "core count", 2, 12),
                olist(
                    "Clusters", "CPU core clusters", "core cluster", "core clusters",
                    enum("ClusterRole", "Role of the cluster", "role",
                         "performance", "efficiency", "balanced"),
                    num("FrequencyGHz", "Peak clock frequency in GHz", "peak frequency",
                        1.0, 3.6, places=1, unit="GHz"),
                    obj(
                        "Cache", "Cache memory of the cluster", "cache",
                        num("SizeKB", "Cache size in KB", "size", 128, 4096, unit="KB"),
                        obj(
                            "Policy", "How the cache manages its lines", "cache policy",
                            enum("Replacement", "Line replacement strategy", "replacement strategy",
                                 "LRU", "FIFO", "random"),
                            flag("WriteBack", "Whether writes are deferred", "write-back",
                                 "uses write-back", "does not use write-back"),
                        ),
                    ),
                ),
            ),
            olist(
                "Sensors", "Sensors built into the device", "sensor", "sensors",
                enum("SensorType", "Kind of sensor", "type",
                     "accelerometer", "gyroscope", "heart rate", "barometer"),
                num("SampleRateHz", "Sampling rate in Hz", "sampling rate", 10, 400, unit="Hz"),
                obj(
                    "Calibration", "Factory calibration of the sensor", "calibration",
                    num("Offset", "Calibration offset", "offset", 0.01, 0.99, places=2),
                    obj(
                        "Profile", "Calibration profile", "calibration profile",
                        text("ProfileName", "Name of the profile", "name",
                             "indoor", "outdoor", "sport"),
                        obj(
                            "Thermal", "Thermal compensation", "thermal compensation",
                            num("CoefficientPpm", "Drift per degree in ppm", "coefficient",
                                5, 90, unit="ppm"),
                            flag("Enabled", "Whether thermal compensation is on", "state",
                                 "is switched on", "is switched off"),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Software", "Software of the device", "software",
            text("OperatingSystem", "Name of the operating system", "operating system",
                 "AuraOS 4.1", "Kestrel 2.0", "FlowOS 7"),
            texts("PreinstalledApps", "Apps installed at the factory", "preinstalled apps",
                  "Sleep Tracker", "Weather", "Workout Coach", "Music", "Maps", "Wallet"),
            obj(
                "Security", "Security features", "security",
                flag("SecureBoot", "Whether secure boot is enabled", "secure boot",
                     "has secure boot", "has no secure boot"),
                obj(
                    "Encryption", "Storage encryption", "encryption",
                    enum("Algorithm", "Encryption algorithm", "algorithm",
                         "AES-128", "AES-256", "ChaCha20"),
                    num("KeyRotationDays", "Days between key rotations", "key rotation period",
                        7, 365, unit="days"),
                ),
            ),
        ),
        obj(
            "Battery", "Battery of the device", "battery",
            num("CapacityMah", "Capacity in mAh", "capacity", 200, 6000, unit="mAh"),
            flag("FastCharging", "Whether fast charging is supported", "fast charging",
                 "supports fast charging", "does not support fast charging"),
            obj(
                "Charger", "The bundled charger", "charger",
                num("PowerWatts", "Charger power in watts", "power", 5, 65, unit="W"),
                enum("Connector", "Charging connector", "connector",
                     "USB-C", "magnetic puck", "Lightning"),
            ),
        ),
    ),
)  # fmt: skip

PATIENT = Domain(
    name="patient",
    entity="the patient",
    names=("Maria Lopez", "James Okafor", "Lena Fischer", "Arjun Mehta", "Sofia Rossi"),
    filler=(
        "The waiting room was unusually quiet that morning.",
        "The clinic moved to a new electronic records system last spring.",
        "A family member accompanied the patient to the appointment.",
        "Parking near the hospital entrance was limited during the visit.",
    ),
    root=obj(
        "Patient", "A patient record", "patient",
        num("Age", "Age in years", "age", 18, 92, unit="years"),
        enum("Sex", "Recorded sex", "recorded sex", "female", "male"),
        flag("IsSmoker", "Whether the patient smokes", "smoking status",
             "smokes", "does not smoke"),
        texts("Allergies", "Known allergies", "allergies",
              "penicillin", "peanuts", "latex", "pollen", "shellfish"),
        obj(
            "Vitals", "Vital signs at admission", "vital signs",
            num("HeartRate", "Heart rate in beats per minute", "heart rate", 48, 130, unit="bpm"),
            num("TemperatureC", "Body temperature in Celsius", "body temperature",
                35.5, 40.5, places=1, unit="°C"),
            obj(
                "BloodPressure", "Blood pressure reading", "blood pressure",
                num("Systolic", "Systolic pressure in mmHg", "systolic value", 90, 190,
                    unit="mmHg"),
                num("Diastolic", "Diastolic pressure in mmHg", "diastolic value", 55, 120,
                    unit="mmHg"),
            ),
        ),
        obj(
            "Treatment", "Treatment plan", "treatment plan",
            text("PrimaryDiagnosis", "Main diagnosis", "primary diagnosis",
                 "type 2 diabetes", "hypertension", "asthma", "migraine"),
            olist(
                "Medications", "Prescribed medications", "medication", "medications",
                text("DrugName", "Name of the drug", "drug", "metformin", "lisinopril",
                     "salbutamol", "sumatriptan", "atorvastatin"),
                num("DoseMg", "Dose in milligrams", "dose", 5, 1000, unit="mg"),
                obj(
                    "Schedule", "When the medication is taken", "schedule",
                    num("TimesPerDay", "Doses per day", "number of doses per day", 1, 4),
                    obj(
                        "Monitoring", "Monitoring of the medication", "monitoring",
                        enum("LabTest", "Lab test used for monitoring", "lab test",
                             "HbA1c", "kidney panel", "liver panel"),
                        obj(
                            "Thresholds", "Values that trigger a review", "review thresholds",
                            num("Upper", "Upper limit", "upper limit", 6.5, 9.9, places=1),
                            flag("AlertDoctor", "Whether the doctor is alerted", "alert rule",
                                 "alerts the doctor", "does not alert the doctor"),
                        ),
                    ),
                ),
            ),
            obj(
                "FollowUp", "Follow-up care", "follow-up",
                num("WeeksUntilVisit", "Weeks until the next visit", "interval", 1, 12,
                    unit="weeks"),
                enum("Department", "Department responsible", "department",
                     "cardiology", "endocrinology", "neurology", "pulmonology"),
            ),
        ),
        obj(
            "History", "Medical history", "medical history",
            texts("PastSurgeries", "Past surgeries", "past surgeries",
                  "appendectomy", "knee arthroscopy", "tonsillectomy", "cataract surgery"),
            obj(
                "Family", "Family history", "family history",
                flag("HeartDisease", "Heart disease in the family", "heart disease record",
                     "includes heart disease", "includes no heart disease"),
                olist(
                    "Relatives", "Relatives with relevant conditions", "relative", "relatives",
                    enum("Relation", "Relation to the patient", "relation",
                         "mother", "father", "sister", "brother"),
                    obj(
                        "Condition", "The relative's condition", "condition",
                        text("ConditionName", "Name of the condition", "name",
                             "stroke", "breast cancer", "glaucoma", "kidney stones"),
                        obj(
                            "Onset", "When the condition began", "onset",
                            num("AgeAtOnset", "Age when it began", "age", 30, 80, unit="years"),
                            flag("Confirmed", "Whether it was clinically confirmed",
                                 "confirmation", "was clinically confirmed",
                                 "was not clinically confirmed"),
                        ),
                    ),
                ),
            ),
        ),
    ),
)  # fmt: skip

ATTRACTION = Domain(
    name="attraction",
    entity="the attraction",
    names=("Silver Lake Gardens", "Old Harbour Fort", "Cedar Canyon Park", "Museum of Tides"),
    filler=(
        "Many visitors arrive by the regional train.",
        "Local guides say spring is the most photogenic season.",
        "The site appears in several travel blogs every year.",
        "A small cafe near the entrance sells regional pastries.",
    ),
    root=obj(
        "Attraction", "A tourist attraction", "attraction",
        text("City", "City where it is located", "city",
             "Lisbon", "Kyoto", "Cape Town", "Quebec City", "Ljubljana"),
        num("AnnualVisitors", "Visitors per year", "annual visitor count", 20000, 900000),
        flag("IsAccessible", "Whether it is wheelchair accessible", "accessibility",
             "is wheelchair accessible", "is not wheelchair accessible"),
        texts("Languages", "Languages of the guided tours", "tour languages",
              "English", "Spanish", "Japanese", "German", "French"),
        obj(
            "Tickets", "Ticketing", "tickets",
            num("AdultPrice", "Adult ticket price in euros", "adult price", 5, 40, places=2,
                unit="euros"),
            flag("OnlineBooking", "Whether tickets can be booked online", "online booking",
                 "can be booked online", "cannot be booked online"),
            olist(
                "Passes", "Multi-day passes", "pass", "passes",
                enum("PassType", "Kind of pass", "kind", "family", "student", "senior"),
                num("ValidDays", "Days the pass is valid", "validity", 1, 14, unit="days"),
                obj(
                    "Discounts", "Discounts that come with the pass", "discounts",
                    num("PercentOff", "Discount in percent", "discount", 5, 50, unit="percent"),
                    obj(
                        "Partner", "The partner offering the discount", "partner",
                        text("PartnerName", "Name of the partner", "name",
                             "Harbour Cafe", "City Bikes", "River Boats"),
                        obj(
                            "Terms", "Terms of the partner discount", "terms",
                            num("MinSpend", "Minimum spend in euros", "minimum spend",
                                10, 60, unit="euros"),
                            flag("Stackable", "Whether it combines with other offers",
                                 "stacking rule", "can be combined with other offers",
                                 "cannot be combined with other offers"),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Facilities", "Visitor facilities", "facilities",
            num("ParkingSpaces", "Number of parking spaces", "parking capacity", 20, 800),
            obj(
                "Restaurant", "On-site restaurant", "restaurant",
                enum("Cuisine", "Type of cuisine", "cuisine",
                     "Mediterranean", "Japanese", "vegetarian", "seafood"),
                num("Seats", "Number of seats", "seating capacity", 20, 250),
                obj(
                    "Menu", "The restaurant menu", "menu",
                    texts("Specialties", "Signature dishes", "specialties",
                          "grilled sardines", "miso soup", "lentil stew", "fish tacos", "paella"),
                    obj(
                        "KidsMenu", "Menu for children", "kids menu",
                        num("PriceEuros", "Price in euros", "price", 4, 15, places=2,
                            unit="euros"),
                        obj(
                            "Allergens", "Allergen labelling", "allergen labelling",
                            flag("GlutenFree", "Whether a gluten-free option exists",
                                 "gluten-free option", "offers a gluten-free option",
                                 "offers no gluten-free option"),
                            texts("Labelled", "Allergens labelled on the menu",
                                  "labelled allergens", "gluten", "nuts", "dairy", "egg", "soy"),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Schedule", "Opening schedule", "opening schedule",
            text("OpeningTime", "Daily opening time", "opening time", "08:00", "09:00", "10:00"),
            text("ClosingTime", "Daily closing time", "closing time", "17:00", "18:00", "20:00"),
            texts("ClosedDays", "Days it is closed", "closing days",
                  "Monday", "Tuesday", "Sunday"),
        ),
    ),
)  # fmt: skip

VEHICLE = Domain(
    name="vehicle",
    entity="the vehicle",
    names=("Vela E3", "Strada GT", "Ridgeback 4x4", "Comet Hatch", "Aster Wagon"),
    filler=(
        "The test drive took place on a rainy afternoon.",
        "Dealers report steady interest from young families.",
        "Its advertising campaign featured mountain roads.",
        "Several owners' clubs have formed since the launch.",
    ),
    root=obj(
        "Vehicle", "A passenger vehicle", "vehicle",
        text("Make", "Manufacturer", "make", "Vela", "Strada", "Ridgeback", "Comet"),
        num("ModelYear", "Model year", "model year", 2018, 2026),
        enum("BodyStyle", "Body style", "body style", "sedan", "hatchback", "SUV", "wagon"),
        flag("IsElectric", "Whether it is fully electric", "drivetrain type",
             "is fully electric", "is not fully electric"),
        obj(
            "Powertrain", "Engine and transmission", "powertrain",
            num("PowerKW", "Peak power in kW", "peak power", 60, 400, unit="kW"),
            obj(
                "Transmission", "The transmission", "transmission",
                enum("TransmissionType", "Kind of transmission", "type",
                     "automatic", "manual", "single-speed"),
                num("Gears", "Number of gears", "number of gears", 1, 10),
            ),
            obj(
                "Battery", "Traction battery", "traction battery",
                num("CapacityKWh", "Usable capacity in kWh", "usable capacity", 20, 110,
                    places=1, unit="kWh"),
                olist(
                    "Modules", "Battery modules", "battery module", "battery modules",
                    num("Cells", "Cells per module", "cell count", 12, 96),
                    obj(
                        "Cooling", "Module cooling", "cooling",
                        enum("Coolant", "Coolant used", "coolant", "glycol", "air", "oil"),
                        obj(
                            "Pump", "Coolant pump", "coolant pump",
                            num("FlowLpm", "Flow in litres per minute", "flow rate",
                                2, 30, unit="litres per minute"),
                            obj(
                                "Controller", "Pump controller", "pump controller",
                                text("Firmware", "Firmware version", "firmware version",
                                     "v2.4", "v3.1", "v5.0"),
                                flag("AutoMode", "Whether it regulates itself",
                                     "automatic mode", "runs in automatic mode",
                                     "does not run in automatic mode"),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Safety", "Safety equipment and ratings", "safety",
            num("Airbags", "Number of airbags", "airbag count", 2, 10),
            texts("Assists", "Driver assistance systems", "driver assists",
                  "lane keeping", "adaptive cruise", "blind spot warning", "parking assist"),
            obj(
                "CrashTest", "Crash test result", "crash test",
                num("Stars", "Star rating", "star rating", 3, 5, unit="stars"),
                obj(
                    "Scores", "Category scores in percent", "category scores",
                    num("AdultOccupant", "Adult occupant score", "adult occupant score", 60, 98,
                        unit="percent"),
                    num("ChildOccupant", "Child occupant score", "child occupant score", 60, 98,
                        unit="percent"),
                ),
            ),
        ),
        obj(
            "Dimensions", "Exterior and interior dimensions", "dimensions",
            num("LengthMm", "Length in millimetres", "length", 3600, 5200, unit="mm"),
            num("TrunkLitres", "Trunk volume in litres", "trunk volume", 250, 700, unit="litres"),
            nums("WheelSizes", "Wheel sizes offered in inches", "wheel sizes", 15, 21,
                 unit="inch"),
        ),
    ),
)  # fmt: skip

MOVIE = Domain(
    name="movie",
    entity="the film",
    names=("Eclipse of the Stars", "The Quiet Harbour", "Paper Lanterns", "Iron Meridian"),
    filler=(
        "Fans queued for hours at the premiere.",
        "Critics compared its mood to classic films of the seventies.",
        "The trailer was viewed millions of times in its first week.",
        "Several scenes were reportedly reshot after test screenings.",
    ),
    root=obj(
        "Movie", "A feature film", "film",
        num("Year", "Release year", "release year", 1995, 2025),
        flag("IsSequel", "Whether the film is a sequel", "sequel status",
             "is a sequel", "is not a sequel"),
        texts("Genres", "Genres of the film", "genres",
              "thriller", "science fiction", "drama", "comedy", "mystery"),
        num("RuntimeMinutes", "Running time in minutes", "running time", 80, 190,
            unit="minutes"),
        olist(
            "Ratings", "Ratings from review sources", "rating", "ratings",
            enum("Source", "Rating source", "source", "IMDb", "Rotten Tomatoes", "Metacritic"),
            num("Score", "Numerical score", "score", 40, 99),
        ),
        obj(
            "Production", "How the film was made", "production",
            text("Studio", "Production studio", "studio",
                 "Lantern Pictures", "Northlight Studios", "Blue Kite Films"),
            num("BudgetMillions", "Budget in millions of dollars", "budget", 5, 250,
                unit="million dollars"),
            olist(
                "Departments", "Crew departments", "crew department", "crew departments",
                enum("DepartmentName", "Department", "name",
                     "camera", "sound", "visual effects", "costume"),
                num("CrewSize", "People in the department", "crew size", 4, 120),
                obj(
                    "Lead", "Head of the department", "department head",
                    text("LeadName", "Name of the head", "name",
                         "Ana Duarte", "Tom Reyes", "Kenji Mori", "Priya Nair"),
                    obj(
                        "Contract", "The head's contract", "contract",
                        num("Weeks", "Contract length in weeks", "length", 8, 60, unit="weeks"),
                        obj(
                            "Bonus", "Performance bonus", "bonus",
                            num("AmountK", "Bonus in thousands of dollars", "amount", 5, 90,
                                unit="thousand dollars"),
                            flag("TiedToBoxOffice", "Whether it depends on box office",
                                 "condition", "depends on box office results",
                                 "does not depend on box office results"),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Release", "Release details", "release",
            enum("Distribution", "How it was distributed", "distribution",
                 "theatrical", "streaming", "hybrid"),
            obj(
                "BoxOffice", "Box office results", "box office",
                num("OpeningWeekendM", "Opening weekend gross in millions", "opening weekend",
                    1, 180, places=1, unit="million dollars"),
                texts("TopMarkets", "Strongest markets", "top markets",
                      "United States", "Japan", "Brazil", "Germany", "India"),
            ),
        ),
    ),
)  # fmt: skip

PLANT = Domain(
    name="plant",
    entity="the plant",
    names=("Blue Passionflower", "Silver Birch", "Desert Marigold", "Giant Water Lily"),
    filler=(
        "Gardeners often share cuttings of it with neighbours.",
        "Botanical illustrations of it date back centuries.",
        "It is a popular subject for nature photographers.",
        "Local legends attach several meanings to its flowers.",
    ),
    root=obj(
        "Plant", "A plant species", "plant",
        text("Family", "Botanical family", "family",
             "Passifloraceae", "Betulaceae", "Asteraceae", "Nymphaeaceae"),
        num("MaxHeightM", "Maximum height in metres", "maximum height", 0.2, 30, places=1,
            unit="metres"),
        flag("IsEvergreen", "Whether it keeps its leaves all year", "foliage habit",
             "is evergreen", "is not evergreen"),
        texts("NativeRegions", "Regions where it is native", "native regions",
              "South America", "northern Europe", "North America", "East Africa", "Australia"),
        obj(
            "Morphology", "Physical form", "morphology",
            obj(
                "Leaves", "Leaf characteristics", "leaves",
                enum("Arrangement", "Leaf arrangement", "arrangement",
                     "alternate", "opposite", "whorled"),
                num("LengthCm", "Leaf length in centimetres", "length", 1, 60, unit="cm"),
            ),
            obj(
                "Flowers", "Flower characteristics", "flowers",
                texts("Colors", "Flower colours", "colours",
                      "white", "purple", "yellow", "pink", "blue"),
                num("Petals", "Number of petals", "petal count", 3, 20),
                obj(
                    "Pollination", "How it is pollinated", "pollination",
                    enum("Vector", "Main pollinator", "main pollinator",
                         "bees", "wind", "beetles", "hummingbirds"),
                    obj(
                        "Season", "Pollination season", "pollination season",
                        enum("StartMonth", "Month it starts", "starting month",
                             "March", "April", "May", "June"),
                        obj(
                            "Climate", "Climate during the season", "season climate",
                            num("MeanTempC", "Mean temperature in Celsius", "mean temperature",
                                8, 30, unit="°C"),
                            flag("NeedsRain", "Whether rain is required", "rain requirement",
                                 "requires rain", "does not require rain"),
                        ),
                    ),
                ),
            ),
        ),
        obj(
            "Cultivation", "Growing requirements", "cultivation",
            enum("Sunlight", "Light requirement", "light requirement",
                 "full sun", "partial shade", "full shade"),
            nums("SoilPh", "Suitable soil pH values", "suitable soil pH values", 5, 8),
            olist(
                "Propagation", "Ways to propagate it", "propagation method",
                "propagation methods",
                enum("Method", "Method", "technique", "seed", "cutting", "division"),
                num("SuccessRate", "Success rate in percent", "success rate", 20, 95,
                    unit="percent"),
                obj(
                    "Timing", "When to propagate", "timing",
                    enum("BestSeason", "Best season", "best season",
                         "spring", "summer", "autumn"),
                    obj(
                        "Aftercare", "Care after propagating", "aftercare",
                        num("WateringDays", "Days between watering", "watering interval",
                            1, 10, unit="days"),
                        flag("Covered", "Whether it is kept covered", "covering",
                             "is kept covered", "is left uncovered"),
                    ),
                ),
            ),
        ),
    ),
)  # fmt: skip

DOMAINS = (DEVICE, PATIENT, ATTRACTION, VEHICLE, MOVIE, PLANT)
