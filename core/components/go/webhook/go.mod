module hardwire.local/components/webhook

go 1.26.0
