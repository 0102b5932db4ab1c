package countries

// world is a larger dataset for the demo and `make bench-tokens`: 75
// countries of every inhabited continent, populations rounded to millions
// (about 2023); dataset takes the tests' seven from it.
func world() []*Country {
	m := func(n int) int { return n * 1_000_000 }
	return []*Country{
		// Africa
		{"NG", "Nigeria", "Abuja", m(224), "AF", []string{"English"}},
		{"ET", "Ethiopia", "Addis Ababa", m(127), "AF", []string{"Amharic"}},
		{"EG", "Egypt", "Cairo", m(113), "AF", []string{"Arabic"}},
		{"CD", "DR Congo", "Kinshasa", m(102), "AF", []string{"French"}},
		{"TZ", "Tanzania", "Dodoma", m(67), "AF", []string{"Swahili", "English"}},
		{"ZA", "South Africa", "Pretoria", m(60), "AF", []string{"Zulu", "Xhosa", "Afrikaans", "English"}},
		{"KE", "Kenya", "Nairobi", m(55), "AF", []string{"English", "Swahili"}},
		{"UG", "Uganda", "Kampala", m(48), "AF", []string{"English", "Swahili"}},
		{"SD", "Sudan", "Khartoum", m(48), "AF", []string{"Arabic", "English"}},
		{"DZ", "Algeria", "Algiers", m(46), "AF", []string{"Arabic", "Berber"}},
		{"MA", "Morocco", "Rabat", m(37), "AF", []string{"Arabic", "Berber"}},
		{"AO", "Angola", "Luanda", m(37), "AF", []string{"Portuguese"}},
		{"GH", "Ghana", "Accra", m(34), "AF", []string{"English"}},
		{"SN", "Senegal", "Dakar", m(18), "AF", []string{"French"}},
		{"TN", "Tunisia", "Tunis", m(12), "AF", []string{"Arabic"}},
		// Asia
		{"IN", "India", "New Delhi", m(1429), "AS", []string{"Hindi", "English"}},
		{"CN", "China", "Beijing", m(1410), "AS", []string{"Chinese"}},
		{"ID", "Indonesia", "Jakarta", m(278), "AS", []string{"Indonesian"}},
		{"PK", "Pakistan", "Islamabad", m(240), "AS", []string{"Urdu", "English"}},
		{"BD", "Bangladesh", "Dhaka", m(173), "AS", []string{"Bengali"}},
		{"JP", "Japan", "Tokyo", m(124), "AS", []string{"Japanese"}},
		{"PH", "Philippines", "Manila", m(117), "AS", []string{"Filipino", "English"}},
		{"VN", "Vietnam", "Hanoi", m(99), "AS", []string{"Vietnamese"}},
		{"IR", "Iran", "Tehran", m(89), "AS", []string{"Persian"}},
		{"TR", "Turkey", "Ankara", m(85), "AS", []string{"Turkish"}},
		{"TH", "Thailand", "Bangkok", m(72), "AS", []string{"Thai"}},
		{"KR", "South Korea", "Seoul", m(52), "AS", []string{"Korean"}},
		{"SA", "Saudi Arabia", "Riyadh", m(37), "AS", []string{"Arabic"}},
		{"MY", "Malaysia", "Kuala Lumpur", m(34), "AS", []string{"Malay"}},
		{"NP", "Nepal", "Kathmandu", m(31), "AS", []string{"Nepali"}},
		{"IL", "Israel", "Jerusalem", m(10), "AS", []string{"Hebrew", "Arabic"}},
		{"SG", "Singapore", "Singapore", m(6), "AS", []string{"English", "Malay", "Chinese", "Tamil"}},
		// Europe
		{"RU", "Russia", "Moscow", m(144), "EU", []string{"Russian"}},
		{"DE", "Germany", "Berlin", m(84), "EU", []string{"German"}},
		{"GB", "United Kingdom", "London", m(68), "EU", []string{"English"}},
		{"FR", "France", "Paris", m(68), "EU", []string{"French"}},
		{"IT", "Italy", "Rome", m(59), "EU", []string{"Italian"}},
		{"ES", "Spain", "Madrid", m(48), "EU", []string{"Spanish"}},
		{"PL", "Poland", "Warsaw", m(37), "EU", []string{"Polish"}},
		{"UA", "Ukraine", "Kyiv", m(37), "EU", []string{"Ukrainian"}},
		{"RO", "Romania", "Bucharest", m(19), "EU", []string{"Romanian"}},
		{"NL", "Netherlands", "Amsterdam", m(18), "EU", []string{"Dutch"}},
		{"BE", "Belgium", "Brussels", m(12), "EU", []string{"Dutch", "French", "German"}},
		{"SE", "Sweden", "Stockholm", m(10), "EU", []string{"Swedish"}},
		{"PT", "Portugal", "Lisbon", m(10), "EU", []string{"Portuguese"}},
		{"GR", "Greece", "Athens", m(10), "EU", []string{"Greek"}},
		{"AT", "Austria", "Vienna", m(9), "EU", []string{"German"}},
		{"CH", "Switzerland", "Bern", m(9), "EU", []string{"German", "French", "Italian", "Romansh"}},
		{"NO", "Norway", "Oslo", m(6), "EU", []string{"Norwegian"}},
		{"IE", "Ireland", "Dublin", m(5), "EU", []string{"English", "Irish"}},
		// North America
		{"US", "United States", "Washington, D.C.", m(335), "NA", []string{"English"}},
		{"MX", "Mexico", "Mexico City", m(129), "NA", []string{"Spanish"}},
		{"CA", "Canada", "Ottawa", m(40), "NA", []string{"English", "French"}},
		{"GT", "Guatemala", "Guatemala City", m(18), "NA", []string{"Spanish"}},
		{"HT", "Haiti", "Port-au-Prince", m(12), "NA", []string{"French", "Haitian Creole"}},
		{"CU", "Cuba", "Havana", m(11), "NA", []string{"Spanish"}},
		{"DO", "Dominican Republic", "Santo Domingo", m(11), "NA", []string{"Spanish"}},
		{"HN", "Honduras", "Tegucigalpa", m(10), "NA", []string{"Spanish"}},
		{"CR", "Costa Rica", "San José", m(5), "NA", []string{"Spanish"}},
		{"PA", "Panama", "Panama City", m(4), "NA", []string{"Spanish"}},
		{"JM", "Jamaica", "Kingston", m(3), "NA", []string{"English"}},
		// South America
		{"BR", "Brazil", "Brasília", m(216), "SA", []string{"Portuguese"}},
		{"CO", "Colombia", "Bogotá", m(52), "SA", []string{"Spanish"}},
		{"AR", "Argentina", "Buenos Aires", m(46), "SA", []string{"Spanish"}},
		{"PE", "Peru", "Lima", m(34), "SA", []string{"Spanish", "Quechua"}},
		{"VE", "Venezuela", "Caracas", m(28), "SA", []string{"Spanish"}},
		{"CL", "Chile", "Santiago", m(20), "SA", []string{"Spanish"}},
		{"EC", "Ecuador", "Quito", m(18), "SA", []string{"Spanish"}},
		{"BO", "Bolivia", "Sucre", m(12), "SA", []string{"Spanish", "Quechua", "Aymara"}},
		{"PY", "Paraguay", "Asunción", m(7), "SA", []string{"Spanish", "Guarani"}},
		{"UY", "Uruguay", "Montevideo", m(3), "SA", []string{"Spanish"}},
		// Oceania
		{"AU", "Australia", "Canberra", m(26), "OC", []string{"English"}},
		{"PG", "Papua New Guinea", "Port Moresby", m(10), "OC", []string{"English", "Tok Pisin"}},
		{"NZ", "New Zealand", "Wellington", m(5), "OC", []string{"English", "Maori"}},
		{"FJ", "Fiji", "Suva", m(1), "OC", []string{"English", "Fijian"}},
	}
}

// NewWorld returns a server like New's over the larger world dataset
// (75 countries) instead of the seven of the tests.
func NewWorld(token string) *Server { return newServer(token, world()) }
