typedef int lapse_analyze_unused;
