"""What the report's views show, computed apart from how they show it: below report/
(views import it, it imports no view) and above summary/ (it reads summaries).

rundata.py  a loaded run's arms (`ArmView`) with their samples and figures, flattened
"""
