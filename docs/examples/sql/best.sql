-- The best quantization per device within 4 GB of peak RSS, by field F1's lower bound
SELECT device, quant_type, constraint_mode, field_f1, field_f1_lo, field_f1_hi, peak_rss_mib
FROM (
  SELECT d.name AS device, a.quant_type, a.constraint_mode,
         round(m.value, 3) AS field_f1, round(m.value_lo, 3) AS field_f1_lo,
         round(m.value_hi, 3) AS field_f1_hi, a.peak_rss_mib,
         ROW_NUMBER() OVER (PARTITION BY d.fingerprint
                            ORDER BY m.value_lo DESC, m.value DESC,
                                     a.decode_tok_s_p50_lo DESC) AS place
  FROM arms a
  JOIN runs r ON r.run_key = a.run_key
  JOIN devices d ON d.fingerprint = r.device
  JOIN arm_metrics m ON m.run_key = a.run_key AND m.model = a.model
                    AND m.constraint_mode = a.constraint_mode
  WHERE m.family = r.task_family AND m.metric = 'field_f1'
    AND a.peak_rss_mib < 4096
)
WHERE place = 1
ORDER BY device;
