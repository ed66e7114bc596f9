-- Field F1 per schema complexity on each device, with its interval
SELECT d.name AS device, a.quant_type, g.group_value AS complexity,
       round(g.value, 3) AS field_f1,
       round(g.value_lo, 3) AS field_f1_lo, round(g.value_hi, 3) AS field_f1_hi
FROM arm_group_metrics g
JOIN arms a ON a.run_key = g.run_key AND a.model = g.model
           AND a.constraint_mode = g.constraint_mode
JOIN runs r ON r.run_key = g.run_key
JOIN devices d ON d.fingerprint = r.device
WHERE g.family = r.task_family AND g.group_key = 'complexity'
  AND g.metric = 'field_f1' AND g.constraint_mode = 'mask'
ORDER BY device, a.quant_type, complexity;
