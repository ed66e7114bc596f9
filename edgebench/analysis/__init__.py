"""What the report's views show, computed apart from how they show it: below report/
(views import it, it imports no view) and above summary/ (it reads summaries).

rundata.py       a loaded run's arms (`ArmView`) with their samples and figures, flattened
figures.py       the preferred accuracy metric, headline scores, each figure's label
sweep.py         a run of several variants as rows, with the Pareto front among them
recommend.py     `edgebench recommend`: the pick under a memory budget and accuracy floor
devices.py       the device axis: arms by device identity, the matrix, units' spread
device_names.py  a device as tables name it
"""
