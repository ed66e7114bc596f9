-- Constrained vs free per device: field F1 gained and decode speed kept, with intervals
SELECT d.name AS device, a.quant_type, a.constraint_mode,
       round(x.difference, 3) AS f1_gain,
       round(x.difference_lo, 3) AS f1_gain_lo, round(x.difference_hi, 3) AS f1_gain_hi,
       round(a.decode_ratio_to_none, 2) AS speed_ratio,
       round(a.decode_ratio_to_none_lo, 2) AS speed_ratio_lo,
       round(a.decode_ratio_to_none_hi, 2) AS speed_ratio_hi
FROM arms a
JOIN runs r ON r.run_key = a.run_key
JOIN devices d ON d.fingerprint = r.device
JOIN differences x ON x.run_key = a.run_key AND x.family = r.task_family
                  AND x.metric = 'field_f1'
                  AND x.base_model = a.model AND x.base_constraint = 'none'
                  AND x.other_model = a.model AND x.other_constraint = a.constraint_mode
WHERE a.constraint_mode <> 'none'
ORDER BY device, a.quant_type, a.constraint_mode;
